//! soml-read Fig. 8d: Algorithm 1 (`proposed`) against the exact optimum and the
//! first-read baseline over the number of queued reads.
//!
//! ```text
//! cargo run --release -p lamina-sched --example soml_fig8d            # the full run
//! cargo run --release -p lamina-sched --example soml_fig8d -- --quick # CI's tiny run
//! ```
//!
//! The paper's setup (§5.2): random queues of 2 … 14 reads of 4, 8, 12 or 16 KiB, each
//! on a random page (so one of the three TLC read latencies of Table 1), 10 000 queues
//! per length. Here: the `soml-tlc64` preset's chip (16 KiB pages, 4 KiB partial-read
//! slots, at most 4 parts, 4 block decoders, its Table 1 latencies, command and
//! data-out times); each read's offset is a random slot-aligned position that keeps it
//! inside its page; its block is random over the plane (all reads of a queue are on one
//! plane: Algorithm 1 combines within a plane). The chip serves the whole queue back to
//! back from time 0; a read's latency is when its operation ends. Printed: mean read
//! latency of each plan and the two ratios to the baseline the figure plots. Queues per
//! length: 10 000 up to 10 reads, 1 000 from 11 on (the exact search grows as 2^n;
//! `--sets N` sets one count for all).

use lamina_nand_model::preset;
use lamina_sched::soml::{
    Objective, SomlPart, op_ns, plan_baseline, plan_greedy, plan_optimal, total_latency_ns,
};
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

fn below(rng: &mut Xoshiro256PlusPlus, n: u64) -> u64 {
    ((rng.next_u64() as u128 * n as u128) >> 64) as u64
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let fixed_sets = args.iter().position(|a| a == "--sets").map(|i| {
        args.get(i + 1).and_then(|v| v.parse::<u64>().ok()).filter(|&n| n > 0).unwrap_or_else(|| {
            eprintln!("soml_fig8d: --sets takes a positive number of queues per length");
            std::process::exit(2)
        })
    });
    if let Some(a) =
        args.iter().find(|a| !["--quick", "--sets"].contains(&a.as_str()) && a.parse::<u64>().is_err())
    {
        eprintln!("soml_fig8d: unknown argument {a:?} (use --quick or --sets N)");
        std::process::exit(2);
    }
    let spec = preset("soml-tlc64").expect("preset").validate().expect("valid preset");
    let g = spec.geometry();
    let t = spec.timing();
    let rules = spec.soml().expect("soml-tlc64 has SOML");
    let gran = g.partial_read_bytes();
    let slots_per_page = g.page_size_bytes() / gran;
    let t_cmd = t.t_cmd_read.0;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(0x0050_318d);
    println!(
        "# soml-read Fig. 8d on soml-tlc64 ({slots_per_page} slots of {gran} B, max {} parts, {} decoders)",
        rules.max_parts, rules.decoders
    );
    println!(
        "queued,queues,baseline_us,proposed_us,proposed_sorted_us,fewest_us,fastest_us,proposed_vs_baseline,fewest_vs_baseline,fastest_vs_baseline,proposed_reads,fewest_reads,fastest_reads"
    );
    let max_n = if quick { 8 } else { 14 };
    for n in 2..=max_n {
        let sets = fixed_sets.unwrap_or(if quick {
            40
        } else if n <= 10 {
            10_000
        } else {
            1_000
        });
        let (mut base, mut prop, mut sorted, mut few, mut fast) = (0u128, 0u128, 0u128, 0u128, 0u128);
        let (mut prop_ops, mut few_ops, mut fast_ops) = (0u64, 0u64, 0u64);
        for _ in 0..sets {
            let q: Vec<SomlPart> = (0..n)
                .map(|_| {
                    let count = 1 + below(&mut rng, u64::from(slots_per_page)) as u32;
                    let first = below(&mut rng, u64::from(slots_per_page - count + 1)) as u32;
                    let block = below(&mut rng, u64::from(g.blocks_per_plane())) as u32;
                    let page = below(&mut rng, u64::from(g.pages_per_block())) as u32;
                    SomlPart {
                        slots: ((1u64 << count) - 1) << first,
                        decoder: block % rules.decoders,
                        array_ns: t.read_array(page).0,
                        out_ns: t.transfer(u64::from(count * gran)).0,
                    }
                })
                .collect();
            base += u128::from(total_latency_ns(&q, &plan_baseline(&q), t_cmd));
            let greedy = plan_greedy(&q, rules.max_parts);
            prop += u128::from(total_latency_ns(&q, &greedy, t_cmd));
            prop_ops += greedy.len() as u64;
            let mut by_rule = greedy.clone();
            // Smith's rule, exactly in integers: a before b iff d_a · |b| < d_b · |a|.
            by_rule.sort_by(|a, b| {
                let (da, db) = (op_ns(&q, a, t_cmd), op_ns(&q, b, t_cmd));
                (da * b.len() as u64).cmp(&(db * a.len() as u64))
            });
            sorted += u128::from(total_latency_ns(&q, &by_rule, t_cmd));
            let (plan, cost) =
                plan_optimal(&q, rules.max_parts, t_cmd, Objective::FewestReads).expect("n <= 14");
            few += u128::from(cost);
            few_ops += plan.len() as u64;
            let (plan, cost) =
                plan_optimal(&q, rules.max_parts, t_cmd, Objective::MeanLatency).expect("n <= 14");
            fast += u128::from(cost);
            fast_ops += plan.len() as u64;
        }
        let mean_us = |x: u128| x as f64 / (sets as f64 * n as f64) / 1000.0;
        let per_queue = |ops: u64| ops as f64 / sets as f64;
        println!(
            "{n},{sets},{:.1},{:.1},{:.1},{:.1},{:.1},{:.4},{:.4},{:.4},{:.2},{:.2},{:.2}",
            mean_us(base),
            mean_us(prop),
            mean_us(sorted),
            mean_us(few),
            mean_us(fast),
            prop as f64 / base as f64,
            few as f64 / base as f64,
            fast as f64 / base as f64,
            per_queue(prop_ops),
            per_queue(few_ops),
            per_queue(fast_ops)
        );
    }
}
