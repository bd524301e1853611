//! A bounded queue that takes from either end and drops its oldest item when full.

use std::collections::VecDeque;
use std::time::Instant;

use crate::kind::QueueOrder;

/// An item with the time it was queued (for `beacon_processor_queue_time_seconds`).
#[derive(Debug)]
pub(crate) struct Queued<T> {
    pub(crate) item: T,
    pub(crate) queued_at: Instant,
}

/// Items in arrival order: the back is the newest. A FIFO queue takes from the front, a LIFO
/// queue from the back; either drops from the front (the oldest) when full, so a flood costs the
/// least valuable items and memory stays at `capacity` items.
#[derive(Debug)]
pub(crate) struct BoundedQueue<T> {
    items: VecDeque<Queued<T>>,
    capacity: usize,
    order: QueueOrder,
}

impl<T> BoundedQueue<T> {
    pub(crate) fn new(capacity: usize, order: QueueOrder) -> Self {
        assert!(capacity > 0, "a queue holds at least one item");
        Self {
            items: VecDeque::new(),
            capacity,
            order,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    /// Queues `item`; returns the oldest item if the queue was full and it had to go.
    pub(crate) fn push(&mut self, item: T, queued_at: Instant) -> Option<T> {
        let evicted = if self.items.len() >= self.capacity {
            self.items.pop_front().map(|q| q.item)
        } else {
            None
        };
        self.items.push_back(Queued { item, queued_at });
        evicted
    }

    /// The next item in the queue's order.
    pub(crate) fn pop(&mut self) -> Option<Queued<T>> {
        match self.order {
            QueueOrder::Fifo => self.items.pop_front(),
            QueueOrder::Lifo => self.items.pop_back(),
        }
    }

    /// Up to `max` items in the queue's order.
    pub(crate) fn pop_up_to(&mut self, max: usize) -> Vec<Queued<T>> {
        let n = max.min(self.items.len());
        match self.order {
            QueueOrder::Fifo => self.items.drain(..n).collect(),
            QueueOrder::Lifo => {
                let start = self.items.len() - n;
                self.items.drain(start..).rev().collect()
            }
        }
    }

    /// Every item, oldest first.
    pub(crate) fn drain(&mut self) -> impl Iterator<Item = T> + '_ {
        self.items.drain(..).map(|q| q.item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filled(
        order: QueueOrder,
        capacity: usize,
        items: impl IntoIterator<Item = u32>,
    ) -> BoundedQueue<u32> {
        let mut q = BoundedQueue::new(capacity, order);
        let now = Instant::now();
        for i in items {
            q.push(i, now);
        }
        q
    }

    #[test]
    fn fifo_takes_the_oldest_and_lifo_the_newest() {
        let mut fifo = filled(QueueOrder::Fifo, 8, 0..4);
        let mut lifo = filled(QueueOrder::Lifo, 8, 0..4);
        let drain = |q: &mut BoundedQueue<u32>| {
            std::iter::from_fn(|| q.pop().map(|q| q.item)).collect::<Vec<_>>()
        };
        assert_eq!(drain(&mut fifo), [0, 1, 2, 3]);
        assert_eq!(drain(&mut lifo), [3, 2, 1, 0]);
    }

    #[test]
    fn a_full_queue_drops_its_oldest_item_in_either_order() {
        for order in [QueueOrder::Fifo, QueueOrder::Lifo] {
            let mut q = filled(order, 3, 0..3);
            assert_eq!(q.push(3, Instant::now()), Some(0));
            assert_eq!(q.push(4, Instant::now()), Some(1));
            assert_eq!(q.len(), 3);
            let mut left: Vec<_> = q.drain().collect();
            left.sort_unstable();
            assert_eq!(left, [2, 3, 4]);
        }
    }

    #[test]
    fn batches_come_in_the_queue_order() {
        let mut fifo = filled(QueueOrder::Fifo, 100, 0..10);
        let mut lifo = filled(QueueOrder::Lifo, 100, 0..10);
        let items = |v: Vec<Queued<u32>>| v.into_iter().map(|q| q.item).collect::<Vec<_>>();
        assert_eq!(items(fifo.pop_up_to(4)), [0, 1, 2, 3]);
        assert_eq!(items(lifo.pop_up_to(4)), [9, 8, 7, 6]);
        assert_eq!(items(lifo.pop_up_to(100)), [5, 4, 3, 2, 1, 0]);
        assert_eq!(lifo.len(), 0);
    }
}
