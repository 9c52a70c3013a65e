//! Work spread over every CPU: one call per item, the results in the items' order.

use std::sync::atomic::{AtomicUsize, Ordering};

/// `f` of each of `items`, on as many threads as there are CPUs (this one among them), in
/// the items' order. The next item goes to whichever thread is free, so a slow item holds up
/// only its own thread. A helper the system refuses (`ulimit -u`) only slows the work: this
/// thread takes its share. A panic in `f` is this thread's, once the others are done.
pub(crate) fn map_in_order<I: Sync, O: Send>(
    items: &[I],
    thread_name: &str,
    f: impl Fn(&I) -> O + Sync,
) -> Vec<O> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(items.len().max(1));
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else {
                return done;
            };
            done.push((i, f(item)));
        }
    };
    let mut done: Vec<(usize, O)> = std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads)
            .map_while(|_| {
                std::thread::Builder::new()
                    .name(thread_name.to_string())
                    .spawn_scoped(scope, work)
                    .ok()
            })
            .collect();
        let mut done = work();
        for helper in helpers {
            done.extend(
                helper
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p)),
            );
        }
        done
    });
    done.sort_unstable_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, out)| out).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Items that take longer the earlier they come, so that the threads finish out of
    /// order: the results still come in the items' order, each once.
    #[test]
    fn results_keep_the_items_order_whoever_finishes_first() {
        let items: Vec<u64> = (0..64).collect();
        let out = map_in_order(&items, "latlab-test", |&i| {
            std::thread::sleep(std::time::Duration::from_micros(64 - i));
            i * i
        });
        assert_eq!(out, items.iter().map(|i| i * i).collect::<Vec<_>>());
        assert!(map_in_order(&[] as &[u8], "latlab-test", |&b| b).is_empty());
    }
}
