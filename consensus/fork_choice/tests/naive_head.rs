//! The proto-array with vote deltas against the spec's `get_head` written naively: over rounds
//! of moved votes, equivocations, balance changes and pruning, both pick the same head.

use fork_choice::{ExecutionStatus, ProtoArray, ProtoNode, VoteTracker};
use types::{Root, phase0::Checkpoint};

fn root(i: usize) -> Root {
    let mut bytes = [0u8; 32];
    // Scatter the roots so that tie-breaks do not follow insertion order.
    bytes[..8].copy_from_slice(&((i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)).to_be_bytes());
    bytes[31] = 1;
    Root::from(bytes)
}

/// The spec's model: blocks by root with parents, latest messages by validator.
struct Naive {
    parents: Vec<(Root, Option<Root>)>,
}

impl Naive {
    fn parent(&self, r: Root) -> Option<Root> {
        self.parents
            .iter()
            .find(|(x, _)| *x == r)
            .and_then(|(_, p)| *p)
    }

    fn is_ancestor(&self, ancestor: Root, mut r: Root) -> bool {
        loop {
            if r == ancestor {
                return true;
            }
            match self.parent(r) {
                Some(p) => r = p,
                None => return false,
            }
        }
    }

    fn head(&self, start: Root, votes: &[(Option<Root>, u64)]) -> Root {
        let weight = |node: Root| -> u64 {
            votes
                .iter()
                .filter_map(|(r, b)| r.map(|r| (r, b)))
                .filter(|(r, _)| self.is_ancestor(node, *r))
                .map(|(_, b)| b)
                .sum()
        };
        let mut head = start;
        loop {
            let best = self
                .parents
                .iter()
                .filter(|(_, p)| *p == Some(head))
                .map(|(c, _)| *c)
                .max_by_key(|c| (weight(*c), *c));
            match best {
                Some(c) => head = c,
                None => return head,
            }
        }
    }
}

#[test]
fn deltas_keep_the_head_equal_to_the_naive_get_head() {
    let genesis = Checkpoint {
        epoch: 0,
        root: root(0),
    };
    let mut rng = splitmix::SplitMix64::new(11);
    for _ in 0..40 {
        let mut array = ProtoArray::default();
        let mut naive = Naive {
            parents: Vec::new(),
        };
        let mut votes = VoteTracker::default();
        let validators = 1 + (rng.next_u64() % 60) as usize;
        let mut balances: Vec<u64> = (0..validators).map(|_| 1 + rng.next_u64() % 32).collect();
        // Each validator's latest message (root, epoch) and whether it equivocated.
        let mut latest: Vec<Option<(Root, u64)>> = vec![None; validators];
        let mut equivocating = vec![false; validators];
        let mut base = root(0);
        let mut count = 0usize;
        let mut add = |array: &mut ProtoArray, naive: &mut Naive, parent: Option<Root>, slot| {
            let r = root(count);
            count += 1;
            array
                .insert(ProtoNode {
                    root: r,
                    parent: None,
                    slot,
                    proposer_index: 0,
                    parent_root: parent.unwrap_or(Root::ZERO),
                    justified: genesis.clone(),
                    unrealized_justified: genesis.clone(),
                    finalized_epoch: 0,
                    timely: true,
                    weight: 0,
                    execution_status: ExecutionStatus::NotValidated,
                })
                .expect("fresh root");
            naive.parents.push((r, parent));
            r
        };
        add(&mut array, &mut naive, None, 0);
        for round in 1..8u64 {
            // New blocks on random held blocks.
            for _ in 0..(1 + rng.next_u64() % 5) {
                let nodes = array.nodes();
                let parent = &nodes[(rng.next_u64() % nodes.len() as u64) as usize];
                let (p, slot) = (parent.root, parent.slot + 1 + rng.next_u64() % 2);
                add(&mut array, &mut naive, Some(p), slot);
            }
            // Votes, some stale (an older epoch than the latest message).
            for _ in 0..(rng.next_u64() % (2 * validators as u64)) {
                let v = (rng.next_u64() % validators as u64) as usize;
                let node = (rng.next_u64() % array.len() as u64) as usize;
                let epoch = round.saturating_sub(rng.next_u64() % 2);
                let taken = votes
                    .process_attestation(v as u64, node as u32, epoch)
                    .expect("small index");
                let newer = latest[v].is_none_or(|(_, e)| epoch > e);
                assert_eq!(taken, newer && !equivocating[v]);
                if taken {
                    latest[v] = Some((array.nodes()[node].root, epoch));
                }
            }
            // Now and then an equivocation or new balances.
            if rng.next_u64().is_multiple_of(3) {
                let v = (rng.next_u64() % validators as u64) as usize;
                votes.set_equivocating(v as u64).expect("small index");
                equivocating[v] = true;
            }
            if rng.next_u64().is_multiple_of(3) {
                for b in &mut balances {
                    *b = rng.next_u64() % 40;
                }
                votes.queue_all();
            }
            let mut deltas = votes
                .compute_deltas(array.len(), &balances)
                .expect("nodes in range");
            array.apply_deltas(&mut deltas).expect("weights stay valid");
            votes.commit(&balances);
            // Now and then prune to a child of the base on the current head's chain.
            if rng.next_u64().is_multiple_of(4) {
                let head = naive.head(base, &[]);
                let mut r = head;
                while let Some(p) = naive.parent(r) {
                    if p == base {
                        break;
                    }
                    r = p;
                }
                if r != base {
                    base = r;
                    let remap = array.prune(&base).expect("held");
                    votes.remap(&remap);
                    naive.parents.retain(|(x, _)| array.index_of(x).is_some());
                    for entry in &mut naive.parents {
                        if entry.1.is_some_and(|p| array.index_of(&p).is_none()) {
                            entry.1 = None;
                        }
                    }
                    for message in latest.iter_mut().flatten() {
                        if array.index_of(&message.0).is_none() {
                            message.0 = Root::ZERO;
                        }
                    }
                }
            }
            let naive_votes: Vec<(Option<Root>, u64)> = latest
                .iter()
                .enumerate()
                .map(|(v, m)| {
                    let r = m.and_then(|(r, _)| (r != Root::ZERO).then_some(r));
                    (if equivocating[v] { None } else { r }, balances[v])
                })
                .collect();
            let start = Checkpoint {
                epoch: 0,
                root: base,
            };
            let head = array.find_head(&start, &start, 0, 8).expect("base held");
            assert_eq!(
                array.nodes()[head].root,
                naive.head(base, &naive_votes),
                "round {round}"
            );
            // Every weight equals the naive attestation score.
            for node in array.nodes() {
                let score: u64 = naive_votes
                    .iter()
                    .filter_map(|(r, b)| r.map(|r| (r, b)))
                    .filter(|(r, _)| naive.is_ancestor(node.root, *r))
                    .map(|(_, b)| b)
                    .sum();
                assert_eq!(node.weight, score, "round {round}");
            }
        }
    }
}
