//! The processor with fake work: priority, order, batching, fairness, panics, thread bounds
//! and shutdown.

mod common;

use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use beacon_processor::{
    BeaconProcessorConfig, DropReason, ProcessorPools, ShutdownMode, SubmitError, Task, WorkKind,
};
use common::*;
use prometheus::Registry;

#[test]
fn a_gossip_block_behind_attestations_and_columns_runs_next() {
    let recorder = Arc::new(Recorder::default());
    let p = processor(one_thread(), Arc::clone(&recorder));
    let blocker = Blocker::start(&p);
    for id in 0..10_000 {
        p.submit(attestation(id)).unwrap();
    }
    for id in 0..1_000 {
        p.submit(column(id)).unwrap();
    }
    p.submit(task(&recorder, WorkKind::GossipBlock, 7)).unwrap();
    assert_eq!(p.queued(WorkKind::GossipAttestation), 10_000);
    assert_eq!(p.queued(WorkKind::GossipDataColumn), 1_000);
    blocker.release();
    p.shutdown(ShutdownMode::Drain);

    let ran = recorder.ran();
    assert_eq!(
        ran[0],
        Ran {
            kind: WorkKind::GossipBlock,
            ids: vec![7]
        }
    );
    // Then the columns, all in one batch, then the attestations in batches of 64.
    assert_eq!(ran[1].kind, WorkKind::GossipDataColumn);
    assert_eq!(ran[1].ids.len(), 1_000);
    let attestations: usize = ran[2..].iter().map(|r| r.ids.len()).sum();
    assert_eq!(attestations, 10_000);
    assert!(
        ran[2..]
            .iter()
            .all(|r| r.kind == WorkKind::GossipAttestation)
    );
    assert_eq!(recorder.dropped_count(), 0);
}

#[test]
fn each_kind_runs_in_its_queue_order() {
    let recorder = Arc::new(Recorder::default());
    let config = BeaconProcessorConfig {
        batching: false,
        fairness_interval: 0,
        ..one_thread()
    };
    let p = processor(config, Arc::clone(&recorder));
    let blocker = Blocker::start(&p);
    for id in 0..5 {
        p.submit(task(&recorder, WorkKind::ApiRequestP1, id))
            .unwrap();
        p.submit(attestation(id)).unwrap();
        p.submit(task(&recorder, WorkKind::RpcBlocksByRangeRequest, id))
            .unwrap();
        p.submit(task(&recorder, WorkKind::GossipSyncCommitteeMessage, id))
            .unwrap();
    }
    blocker.release();
    p.shutdown(ShutdownMode::Drain);

    let ids_of = |kind| -> Vec<u64> {
        recorder
            .ran()
            .iter()
            .filter(|r| r.kind == kind)
            .flat_map(|r| r.ids.clone())
            .collect()
    };
    assert_eq!(ids_of(WorkKind::GossipAttestation), [4, 3, 2, 1, 0], "LIFO");
    assert_eq!(
        ids_of(WorkKind::GossipSyncCommitteeMessage),
        [4, 3, 2, 1, 0],
        "LIFO"
    );
    assert_eq!(
        ids_of(WorkKind::RpcBlocksByRangeRequest),
        [0, 1, 2, 3, 4],
        "FIFO"
    );
    assert_eq!(ids_of(WorkKind::ApiRequestP1), [0, 1, 2, 3, 4], "FIFO");
    // Strict priority between them: attestations, sync messages, RPC, API.
    let kinds: Vec<_> = recorder.ran().iter().map(|r| r.kind).collect();
    let first = |k| kinds.iter().position(|&x| x == k).unwrap();
    let last = |k| kinds.iter().rposition(|&x| x == k).unwrap();
    assert!(last(WorkKind::GossipAttestation) < first(WorkKind::GossipSyncCommitteeMessage));
    assert!(last(WorkKind::GossipSyncCommitteeMessage) < first(WorkKind::RpcBlocksByRangeRequest));
    assert!(last(WorkKind::RpcBlocksByRangeRequest) < first(WorkKind::ApiRequestP1));
}

#[test]
fn batches_form_with_the_expected_sizes_only_when_two_are_queued() {
    let recorder = Arc::new(Recorder::default());
    let p = processor(one_thread(), Arc::clone(&recorder));

    // Alone in the queue: handed alone.
    p.submit(attestation(0)).unwrap();
    wait_for(|| recorder.ran().len() == 1);
    let blocker = Blocker::start(&p);
    for id in 1..=100 {
        p.submit(attestation(id)).unwrap();
    }
    for id in 0..3 {
        p.submit(aggregate(id)).unwrap();
    }
    for id in 0..300 {
        p.submit(column(id)).unwrap();
    }
    blocker.release();
    p.shutdown(ShutdownMode::Drain);

    let sizes: Vec<_> = recorder
        .ran()
        .iter()
        .map(|r| (r.kind, r.ids.len()))
        .collect();
    assert_eq!(
        sizes,
        [
            (WorkKind::GossipAttestation, 1),
            (WorkKind::GossipDataColumn, 300),
            (WorkKind::GossipAggregate, 3),
            (WorkKind::GossipAttestation, 64),
            (WorkKind::GossipAttestation, 36),
        ]
    );
    // A LIFO batch starts with the newest.
    assert_eq!(recorder.ran()[3].ids[0], 100);
}

#[test]
fn the_fairness_turn_serves_a_starved_kind() {
    // 1,000 attestations handed one by one would hold an API request back for 1,000 dispatches
    // under strict priority; with the fairness turn it takes the 16th dispatch (the blocking
    // task took the first, so 14 attestations run before it).
    for (fairness_interval, expected_position) in [(16, 14), (0, 1_000)] {
        let recorder = Arc::new(Recorder::default());
        let config = BeaconProcessorConfig {
            batching: false,
            fairness_interval,
            ..one_thread()
        };
        let p = processor(config, Arc::clone(&recorder));
        let blocker = Blocker::start(&p);
        for id in 0..1_000 {
            p.submit(attestation(id)).unwrap();
        }
        p.submit(task(&recorder, WorkKind::ApiRequestP1, 0))
            .unwrap();
        blocker.release();
        p.shutdown(ShutdownMode::Drain);
        let position = recorder
            .ran()
            .iter()
            .position(|r| r.kind == WorkKind::ApiRequestP1)
            .unwrap();
        assert_eq!(
            position, expected_position,
            "fairness interval {fairness_interval}"
        );
    }
}

#[test]
fn a_panicking_item_does_not_stop_the_pool() {
    let recorder = Arc::new(Recorder::default());
    let registry = Registry::new();
    let p = processor(
        BeaconProcessorConfig {
            main_threads: 2,
            ..BeaconProcessorConfig::default()
        },
        Arc::clone(&recorder),
    );
    p.register_metrics(&registry).unwrap();
    for id in 0..200 {
        if id % 10 == 0 {
            p.submit(Task::new(WorkKind::ApiRequestP1, |_| {
                panic!("a bad request")
            }))
            .unwrap();
        } else {
            p.submit(task(&recorder, WorkKind::ApiRequestP1, id))
                .unwrap();
        }
    }
    let mut bad = Item::new(1_000);
    bad.panic = true;
    p.submit(beacon_processor::BatchItem::GossipAttestation(bad))
        .unwrap();
    p.shutdown(ShutdownMode::Drain);

    let api_ran = recorder
        .ran()
        .iter()
        .filter(|r| r.kind == WorkKind::ApiRequestP1)
        .count();
    assert_eq!(api_ran, 180);
    assert_eq!(
        counter(
            &registry,
            "beacon_processor_work_panics_total",
            "api_request_p1"
        ),
        20.0
    );
    assert_eq!(
        counter(
            &registry,
            "beacon_processor_work_panics_total",
            "gossip_attestation"
        ),
        1.0
    );
}

#[test]
fn at_most_cores_plus_one_threads_run_handler_work_during_a_burst() {
    let cores = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .max(2);
    let recorder = Arc::new(Recorder::with_work(20_000));
    let config = BeaconProcessorConfig {
        main_threads: cores,
        ..BeaconProcessorConfig::default()
    };
    let p = processor(config, Arc::clone(&recorder));
    // Four submitters at once, every kind that fans out on the pool, and backfill beside them.
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let p = p.clone();
            let recorder = Arc::clone(&recorder);
            s.spawn(move || {
                for i in 0..200 {
                    let id = t * 1_000 + i;
                    p.submit(attestation(id)).unwrap();
                    p.submit(column(id)).unwrap();
                    p.submit(aggregate(id)).unwrap();
                    if i % 4 == 0 {
                        p.submit(task(&recorder, WorkKind::ApiRequestP1, id))
                            .unwrap();
                    }
                    if i % 20 == 0 {
                        p.submit(task(&recorder, WorkKind::ChainSegment, id))
                            .unwrap();
                    }
                    if i % 50 == 0 {
                        p.submit(task(&recorder, WorkKind::BackfillSegment, id))
                            .unwrap();
                    }
                }
            });
        }
    });
    p.shutdown(ShutdownMode::Drain);

    let max = recorder.busy.max();
    assert!(max <= cores + 1, "{max} threads busy with {cores} cores");
    assert!(max >= 2, "the burst ran in parallel ({max} threads)");
    // Nothing ran on rayon's global pool or the submitters' threads.
    let threads = recorder.threads.lock().unwrap().clone();
    assert!(
        threads
            .iter()
            .all(|t| t.starts_with("bp-main-") || t.starts_with("bp-backfill-")),
        "{threads:?}"
    );
    assert!(threads.iter().any(|t| t.starts_with("bp-backfill-")));
    assert_eq!(recorder.dropped_count(), 0);
    let items: usize = recorder.ran().iter().map(|r| r.ids.len()).sum();
    assert_eq!(items, 4 * (200 * 3 + 50 + 10 + 4));
}

/// Two processors on one set of pools (the nodes of an `arbor dev` process): every handler of
/// both runs on the shared pools' threads, and the busy threads stay within them.
#[test]
fn processors_sharing_pools_keep_to_the_pools_threads() {
    let pools = ProcessorPools::new(2, 1).expect("pools start");
    let recorders = [
        Arc::new(Recorder::with_work(20_000)),
        Arc::new(Recorder::with_work(20_000)),
    ];
    let busy = Arc::new(BusyThreads::default());
    let processors: Vec<_> = recorders
        .iter()
        .map(|recorder| {
            processor(
                BeaconProcessorConfig {
                    pools: Some(pools.clone()),
                    ..BeaconProcessorConfig::default()
                },
                Arc::clone(recorder),
            )
        })
        .collect();
    std::thread::scope(|s| {
        for (p, recorder) in processors.iter().zip(&recorders) {
            let busy = Arc::clone(&busy);
            s.spawn(move || {
                for id in 0..200 {
                    p.submit(attestation(id)).unwrap();
                    p.submit(column(id)).unwrap();
                    if id % 10 == 0 {
                        let busy = Arc::clone(&busy);
                        p.submit(Task::new(WorkKind::ApiRequestP1, move |_| {
                            let _busy = busy.enter();
                            std::hint::black_box(spin(200_000));
                        }))
                        .unwrap();
                        p.submit(task(recorder, WorkKind::BackfillSegment, id))
                            .unwrap();
                    }
                }
            });
        }
    });
    for p in &processors {
        p.shutdown(ShutdownMode::Drain);
    }
    for recorder in &recorders {
        let threads = recorder.threads.lock().unwrap().clone();
        assert!(
            threads
                .iter()
                .all(|t| t.starts_with("bp-main-") || t.starts_with("bp-backfill-")),
            "{threads:?}"
        );
        assert_eq!(recorder.dropped_count(), 0);
    }
    assert!(Arc::ptr_eq(processors[0].pools().main(), pools.main()));
    assert!(busy.max() <= pools.threads(), "{} busy", busy.max());
}

/// Work handed to the pool from outside the processor (the chain's data-parallel work called
/// off the pools) gets a thread after the item running now, not once the queues are empty:
/// a worker gives one pending job of its pool its turn between items.
#[test]
fn work_handed_to_the_pool_from_outside_waits_one_item_not_the_queue() {
    let recorder = Arc::new(Recorder::default());
    let p = processor(one_thread(), Arc::clone(&recorder));
    let blocker = Blocker::start(&p);
    for id in 0..1_000 {
        p.submit(task(&recorder, WorkKind::ApiRequestP1, id))
            .unwrap();
    }
    let (injected_tx, injected) = mpsc::channel();
    let outside = {
        let p = p.clone();
        let recorder = Arc::clone(&recorder);
        std::thread::spawn(move || {
            let pool = p.pool(WorkKind::ApiRequestP1);
            // Queued behind the blocker, like the 1,000 tasks.
            pool.install(|| {
                let _ = injected_tx.send(());
                recorder.ran().len()
            })
        })
    };
    // Give the job time to be queued behind the blocker: rayon shows no queue to wait on.
    // A job queued after the release would see more tasks run before it and fail the bound,
    // so this clock wait is the test's one timing assumption.
    std::thread::sleep(Duration::from_millis(200));
    blocker.release();
    injected
        .recv_timeout(Duration::from_secs(30))
        .expect("the outside job ran");
    let ran_before = outside.join().expect("the outside thread ends");
    assert!(
        ran_before <= 1,
        "{ran_before} tasks ran before the outside job"
    );
    p.shutdown(ShutdownMode::Drain);
    assert_eq!(recorder.ran().len(), 1_000);
}

#[test]
fn shutdown_with_full_queues_drops_and_reports_everything_and_returns() {
    let recorder = Arc::new(Recorder::default());
    let p = processor(one_thread(), Arc::clone(&recorder));
    let blocker = Blocker::start(&p);
    let mut queued = 0;
    for kind in [
        WorkKind::GossipBlock,
        WorkKind::RpcStatus,
        WorkKind::ApiRequestP1,
        WorkKind::GossipVoluntaryExit,
    ] {
        for id in 0..kind.capacity() as u64 {
            p.submit(task(&recorder, kind, id)).unwrap();
            queued += 1;
        }
    }
    for id in 0..WorkKind::GossipAttestation.capacity() as u64 {
        p.submit(attestation(id)).unwrap();
        queued += 1;
    }

    let (done_tx, done_rx) = mpsc::channel();
    let shutting_down = p.clone();
    let handle = std::thread::spawn(move || {
        shutting_down.shutdown(ShutdownMode::DropQueued);
        done_tx.send(()).unwrap();
    });
    // Every queued item is reported dropped before shutdown waits for the running one.
    wait_for(|| recorder.dropped_count() == queued);
    assert!(
        done_rx.try_recv().is_err(),
        "shutdown waits for the running task"
    );
    blocker.release();
    done_rx
        .recv_timeout(Duration::from_secs(30))
        .expect("shutdown returns once the running task ends");
    handle.join().unwrap();

    assert!(recorder.ran().is_empty());
    assert!(
        recorder
            .dropped
            .lock()
            .unwrap()
            .iter()
            .all(|(_, _, reason)| *reason == DropReason::ShuttingDown)
    );
    // Work submitted afterwards is refused and reported.
    let refused = p.submit(task(&recorder, WorkKind::GossipBlock, 99));
    assert!(matches!(
        refused,
        Err(SubmitError::ShuttingDown(WorkKind::GossipBlock))
    ));
    assert_eq!(recorder.dropped_count(), queued + 1);
}

#[test]
fn a_drained_shutdown_runs_everything_queued() {
    let recorder = Arc::new(Recorder::default());
    let p = processor(one_thread(), Arc::clone(&recorder));
    let blocker = Blocker::start(&p);
    for id in 0..1_000 {
        p.submit(task(&recorder, WorkKind::RpcBlocksByRootRequest, id))
            .unwrap();
    }
    let shutting_down = p.clone();
    let handle = std::thread::spawn(move || shutting_down.shutdown(ShutdownMode::Drain));
    blocker.release();
    handle.join().unwrap();
    assert_eq!(recorder.ran().len(), 1_000);
    assert_eq!(recorder.dropped_count(), 0);
}

#[test]
fn a_full_queue_drops_its_oldest_and_reports_it() {
    let recorder = Arc::new(Recorder::default());
    let registry = Registry::new();
    let p = processor(one_thread(), Arc::clone(&recorder));
    p.register_metrics(&registry).unwrap();
    let blocker = Blocker::start(&p);
    let capacity = WorkKind::GossipAggregate.capacity() as u64;
    for id in 0..capacity + 10 {
        p.submit(aggregate(id)).unwrap();
    }
    assert_eq!(p.queued(WorkKind::GossipAggregate), capacity as usize);
    let dropped = recorder.dropped.lock().unwrap().clone();
    assert_eq!(
        dropped,
        (0..10)
            .map(|id| (WorkKind::GossipAggregate, id, DropReason::QueueFull))
            .collect::<Vec<_>>()
    );
    assert_eq!(
        counter(
            &registry,
            "beacon_processor_work_events_dropped_total",
            "gossip_aggregate"
        ),
        10.0
    );
    assert_eq!(
        counter(
            &registry,
            "beacon_processor_queue_length",
            "gossip_aggregate"
        ),
        capacity as f64
    );
    blocker.release();
    p.shutdown(ShutdownMode::Drain);
    assert_eq!(
        counter(
            &registry,
            "beacon_processor_work_events_received_total",
            "gossip_aggregate"
        ),
        (capacity + 10) as f64
    );
}

#[test]
fn a_task_of_a_batchable_kind_is_refused_and_handed_back() {
    let p = processor(one_thread(), Arc::default());
    let refused = p.submit(Task::new(WorkKind::GossipDataColumn, |_| {}));
    match refused {
        Err(SubmitError::BatchableKindAsTask(task)) => {
            assert_eq!(task.kind(), WorkKind::GossipDataColumn)
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn every_metric_is_registered_with_its_labels() {
    let registry = Registry::new();
    let p = processor(one_thread(), Arc::default());
    p.register_metrics(&registry).unwrap();
    p.submit(attestation(1)).unwrap();
    p.shutdown(ShutdownMode::Drain);
    let names: Vec<_> = registry
        .gather()
        .iter()
        .map(|f| f.name().to_owned())
        .collect();
    for name in [
        "beacon_processor_queue_length",
        "beacon_processor_work_events_received_total",
        "beacon_processor_work_events_dropped_total",
        "beacon_processor_work_panics_total",
        "beacon_processor_queue_time_seconds",
        "beacon_processor_worker_time_seconds",
        "beacon_processor_batch_size",
        "beacon_processor_busy_workers",
    ] {
        assert!(
            names.iter().any(|n| n == name),
            "{name} missing from {names:?}"
        );
    }
    let batch = registry
        .gather()
        .into_iter()
        .find(|f| f.name() == "beacon_processor_batch_size")
        .unwrap();
    let attestation = batch
        .get_metric()
        .iter()
        .find(|m| {
            m.get_label()
                .iter()
                .any(|l| l.value() == "gossip_attestation")
        })
        .unwrap();
    assert_eq!(attestation.get_histogram().get_sample_count(), 1);
}

/// A counter or gauge value by metric name and `kind` label.
fn counter(registry: &Registry, name: &str, kind: &str) -> f64 {
    let family = registry
        .gather()
        .into_iter()
        .find(|f| f.name() == name)
        .unwrap_or_else(|| panic!("{name} not registered"));
    let metric = family
        .get_metric()
        .iter()
        .find(|m| m.get_label().iter().any(|l| l.value() == kind))
        .unwrap_or_else(|| panic!("{name} has no {kind}"))
        .clone();
    // The other of the two reads as zero.
    metric.get_counter().get_value() + metric.get_gauge().get_value()
}
