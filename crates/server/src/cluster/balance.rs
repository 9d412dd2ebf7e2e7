//! When tables move between live nodes, and how many: the rebalancing
//! policy (docs/operations.md, "Rebalancing").
//!
//! - Only the most loaded node sends tables (ties: the smallest node id),
//!   so two nodes never fill the same one from stale counts at once.
//! - It sends only while it holds at least two more than its fair share
//!   (the tables of the live nodes divided by their number, rounded up):
//!   a difference of one is left alone, so no table goes back and forth.
//! - They go to the least loaded node, at most as many as it lacks of its
//!   fair share, and at most `at_once` on their way at a time. Each moves at
//!   its hand's end (the cluster does the rest, `Cluster::move_table`).

/// The node to send tables to and how many to start sending now, for node
/// `me` which plays `mine` tables (`on_the_way` of them already moving);
/// `loads`: every live node's tables at its last heartbeat (`me`'s own row
/// among them is ignored: `mine` is newer). `None`: nothing moves.
pub fn plan(
    me: &str,
    mine: i64,
    loads: &[(String, i64)],
    on_the_way: usize,
    at_once: usize,
) -> Option<(String, usize)> {
    let others: Vec<&(String, i64)> = loads.iter().filter(|(id, _)| id != me).collect();
    if others.is_empty() || on_the_way >= at_once {
        return None;
    }
    let nodes = others.len() as i64 + 1;
    let total = mine + others.iter().map(|(_, t)| t).sum::<i64>();
    let fair = (total + nodes - 1) / nodes;
    // The most loaded sends; a tie goes to the smallest id.
    let busiest = others.iter().all(|(id, t)| *t < mine || (*t == mine && me < id.as_str()));
    if !busiest || mine < fair + 2 {
        return None;
    }
    let (least, least_tables) = others.iter().min_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(&b.0)))?;
    let moving = on_the_way as i64;
    let count = (mine - moving - fair).min(fair - least_tables - moving).min((at_once - on_the_way) as i64);
    (count > 0).then(|| (least.clone(), count as usize))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loads(of: &[(&str, i64)]) -> Vec<(String, i64)> {
        of.iter().map(|(id, t)| (id.to_string(), *t)).collect()
    }

    #[test]
    fn a_node_that_joins_gets_tables_from_the_busiest_a_few_at_a_time() {
        let l = loads(&[("a", 100), ("b", 100), ("c", 0)]);
        // Fair share 67: a sends to c, four at a time; b waits its turn.
        assert_eq!(plan("a", 100, &l, 0, 4), Some(("c".into(), 4)));
        assert_eq!(plan("a", 100, &l, 3, 4), Some(("c".into(), 1)));
        assert_eq!(plan("a", 100, &l, 4, 4), None, "four on their way already");
        assert_eq!(plan("b", 100, &l, 0, 4), None, "a tie: the smallest id sends");
        assert_eq!(plan("c", 0, &l, 0, 4), None);
        // Once a is down to its share, b is the busiest.
        let l = loads(&[("a", 67), ("b", 100), ("c", 33)]);
        assert_eq!(plan("a", 67, &l, 0, 4), None);
        assert_eq!(plan("b", 100, &l, 0, 4), Some(("c".into(), 4)));
    }

    #[test]
    fn nothing_moves_for_a_difference_of_one_or_a_lone_node() {
        assert_eq!(plan("a", 11, &loads(&[("a", 11), ("b", 10)]), 0, 4), None);
        assert_eq!(plan("a", 12, &loads(&[("a", 12), ("b", 10)]), 0, 4), None, "fair 11: one over");
        assert_eq!(plan("a", 13, &loads(&[("a", 13), ("b", 9)]), 0, 4), Some(("b".into(), 2)));
        assert_eq!(plan("a", 50, &loads(&[("a", 50)]), 0, 4), None);
        assert_eq!(plan("a", 50, &loads(&[("b", 0)]), 0, 0), None, "rebalancing off");
    }

    #[test]
    fn the_receiver_gets_no_more_than_it_lacks() {
        // Fair share 34: c lacks 4 only.
        let l = loads(&[("a", 38), ("b", 34), ("c", 30)]);
        assert_eq!(plan("a", 38, &l, 0, 8), Some(("c".into(), 4)));
        assert_eq!(plan("a", 38, &l, 2, 8), Some(("c".into(), 2)));
    }
}
