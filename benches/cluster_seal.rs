//! The cost of the seal on cluster messages (crates/server/src/cluster/seal.rs):
//! sealing and opening one relayed event of a typical size. Every event a
//! node relays to another is sealed once by the owner and opened once by
//! the socket's node, so this is what trusting nothing on NATS adds per
//! relayed message.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

use mahjong::cluster::seal::{ClusterKey, Replays, Seal};

fn bench_seal(c: &mut Criterion) {
    let keys = [ClusterKey { id: 1, secret: [7; 32], active_in_ms: -1 }];
    let (sender, receiver) = (Seal::new(&keys), Seal::new(&keys));
    // A relayed frame as the owner publishes it: its number, then an event.
    let event = br#"12 m{"type":"event","seq":1234,"at_us":1764395000000000,"event":{"type":"discarded","player":2,"tile":"7C","claims_until_us":1764395003000000}}"#;
    let subject = "mj.relay.6f1c2ab6c3a94d7f9b2a0c4b5e6d7f80.17";
    let mut group = c.benchmark_group("cluster message");
    group.throughput(Throughput::Bytes(event.len() as u64));
    group.bench_function("seal", |b| b.iter(|| black_box(sender.seal(subject, black_box(event)))));
    let mut replays = Replays::default();
    group.bench_function("seal and open", |b| {
        b.iter(|| {
            let sealed = sender.seal(subject, black_box(event)).unwrap();
            black_box(receiver.open(subject, &sealed, &mut replays).unwrap())
        })
    });
    group.finish();
}

criterion_group!(benches, bench_seal);
criterion_main!(benches);
