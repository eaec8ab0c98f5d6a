//! Paired timing for the process benches.
//!
//! Criterion measures one function after the other, so a change in the
//! machine's load between them (other builds, the hypervisor) moves the
//! ratio the goals are stated in. Here the programs take turns, run by
//! run, and each one's median is reported beside the first one's.

use std::time::{Duration, Instant};

/// Runs each program `runs` times, in turn, and prints every median and
/// its ratio to the first one's (the baseline, e.g. `bash -c true`).
pub fn interleaved(title: &str, runs: usize, programs: &mut [(&str, &mut dyn FnMut())]) {
    let mut times: Vec<Vec<Duration>> = vec![Vec::with_capacity(runs); programs.len()];
    for _ in 0..runs {
        for (i, (_, run)) in programs.iter_mut().enumerate() {
            let start = Instant::now();
            run();
            times[i].push(start.elapsed());
        }
    }
    let medians: Vec<Duration> = times
        .iter_mut()
        .map(|t| {
            t.sort();
            t[t.len() / 2]
        })
        .collect();
    println!("{title}: medians of {runs} interleaved runs each");
    for ((name, _), median) in programs.iter().zip(&medians) {
        println!(
            "  {name:<60} {:>7.3} ms  {:.2}×",
            median.as_secs_f64() * 1e3,
            median.as_secs_f64() / medians[0].as_secs_f64()
        );
    }
}
