//! The decisions as a model, apart from storage: the classes of keys joined by `same` decisions
//! (a union-find over keys), the `distinct` decisions lifted to pairs of classes, a new decision's
//! contradiction with its evidence, and the grouping of documents under the decisions
//! ([`group_under`]: the one grouping routine of the writer's regroup and of `pairs --groups`).
//!
//! The rules (each a property test below, against a brute-force model):
//! * every live document of a class is in one group (a `same` decision stands whatever the scores
//!   say, transitively: `same A B` and `same B C` keep A and C together, also while B is absent);
//! * no group holds two classes with a `distinct` decision between them;
//! * soft edges (verified duplicates) are taken in the order given; one that would merge two
//!   groups across a `distinct` pair is held back (and names the decision), every other is taken.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use super::{Decision, DecisionKind};

/// A pair of keys, smaller first (byte order): the identity of a decision.
pub(crate) type KeyPair = (String, String);

/// `(a, b)` with the smaller key first.
pub(crate) fn key_pair(a: &str, b: &str) -> KeyPair {
    if a <= b {
        (a.to_string(), b.to_string())
    } else {
        (b.to_string(), a.to_string())
    }
}

/// The classes of keys under a set of decisions.
#[derive(Clone, Debug, Default)]
pub(crate) struct Classes {
    of: HashMap<String, usize>,
    members: Vec<Vec<String>>,
    /// `(c1, c2)`, `c1 < c2` → the first `distinct` decision between the two classes.
    distinct: HashMap<(usize, usize), KeyPair>,
    /// The classes with at least one `distinct` decision.
    constrained: BTreeSet<usize>,
    /// The `same` decisions as an adjacency list (for evidence).
    same: HashMap<String, Vec<String>>,
}

fn find(parent: &mut [usize], mut x: usize) -> usize {
    while parent[x] != x {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    x
}

impl Classes {
    /// The classes of every key named by `decisions`.
    pub(crate) fn build<'a>(decisions: impl IntoIterator<Item = &'a Decision>) -> Classes {
        let ds: Vec<&Decision> = decisions.into_iter().collect();
        let mut index: HashMap<&str, usize> = HashMap::new();
        let mut keys: Vec<&str> = Vec::new();
        for d in &ds {
            for k in [d.a.as_str(), d.b.as_str()] {
                index.entry(k).or_insert_with(|| {
                    keys.push(k);
                    keys.len() - 1
                });
            }
        }
        let mut parent: Vec<usize> = (0..keys.len()).collect();
        let mut c = Classes::default();
        for d in ds.iter().filter(|d| d.decision == DecisionKind::Same) {
            let (x, y) = (find(&mut parent, index[d.a.as_str()]), find(&mut parent, index[d.b.as_str()]));
            parent[x.max(y)] = x.min(y);
            c.same.entry(d.a.clone()).or_default().push(d.b.clone());
            c.same.entry(d.b.clone()).or_default().push(d.a.clone());
        }
        let mut class_of_root: HashMap<usize, usize> = HashMap::new();
        for (i, k) in keys.iter().enumerate() {
            let r = find(&mut parent, i);
            let next = class_of_root.len();
            let cl = *class_of_root.entry(r).or_insert(next);
            if cl == c.members.len() {
                c.members.push(Vec::new());
            }
            c.members[cl].push(k.to_string());
            c.of.insert(k.to_string(), cl);
        }
        for d in ds.iter().filter(|d| d.decision == DecisionKind::Distinct) {
            let (x, y) = (c.of[&d.a], c.of[&d.b]);
            c.distinct.entry((x.min(y), x.max(y))).or_insert_with(|| (d.a.clone(), d.b.clone()));
            c.constrained.insert(x);
            c.constrained.insert(y);
        }
        c
    }

    /// The class of a key (`None`: no decision names it).
    pub(crate) fn class(&self, key: &str) -> Option<usize> {
        self.of.get(key).copied()
    }

    /// The keys of a class.
    pub(crate) fn members(&self, class: usize) -> &[String] {
        self.members.get(class).map_or(&[], Vec::as_slice)
    }

    /// The classes with a `distinct` decision.
    pub(crate) fn constrained(&self) -> &BTreeSet<usize> {
        &self.constrained
    }

    /// The `distinct` decision between a class of `x` and one of `y`, if any.
    pub(crate) fn blocking(&self, x: &BTreeSet<usize>, y: &BTreeSet<usize>) -> Option<&KeyPair> {
        for &a in x {
            if !self.constrained.contains(&a) {
                continue;
            }
            for &b in y {
                if let Some(p) = self.distinct.get(&(a.min(b), a.max(b))) {
                    return Some(p);
                }
            }
        }
        None
    }

    /// The `same` decisions that join `a` to `b` (a shortest chain; empty when not joined).
    pub(crate) fn same_path(&self, a: &str, b: &str) -> Vec<KeyPair> {
        let mut prev: HashMap<&str, &str> = HashMap::new();
        let mut queue: VecDeque<&str> = VecDeque::from([a]);
        prev.insert(a, a);
        while let Some(x) = queue.pop_front() {
            if x == b {
                let mut out = Vec::new();
                let mut cur = b;
                while cur != a {
                    let p = prev[cur];
                    out.push(key_pair(p, cur));
                    cur = p;
                }
                out.reverse();
                return out;
            }
            for y in self.same.get(x).into_iter().flatten() {
                if !prev.contains_key(y.as_str()) {
                    prev.insert(y, x);
                    queue.push_back(y);
                }
            }
        }
        Vec::new()
    }
}

/// The decisions a new decision `d` contradicts (empty: none), given the others (`decisions`, any
/// earlier decision on the same pair left out: a new decision replaces it). `distinct A B`
/// contradicts the chain of `same` decisions joining A to B; `same A B` contradicts a `distinct`
/// decision between A's class and B's, with the chains that reach its two keys.
pub(crate) fn contradiction(decisions: &BTreeMap<KeyPair, Decision>, d: &Decision) -> Vec<KeyPair> {
    let pair = key_pair(&d.a, &d.b);
    let classes = Classes::build(decisions.iter().filter(|(p, _)| **p != pair).map(|(_, d)| d));
    let (ca, cb) = (classes.class(&d.a), classes.class(&d.b));
    match d.decision {
        DecisionKind::Distinct => match (ca, cb) {
            (Some(x), Some(y)) if x == y => classes.same_path(&d.a, &d.b),
            _ => Vec::new(),
        },
        DecisionKind::Same => {
            let (Some(x), Some(y)) = (ca, cb) else { return Vec::new() };
            match classes.distinct.get(&(x.min(y), x.max(y))) {
                Some((p, q)) => {
                    // Orient the distinct pair: p on a's side.
                    let (p, q) = if classes.class(p) == Some(x) { (p, q) } else { (q, p) };
                    let mut out = classes.same_path(&d.a, p);
                    out.push(key_pair(p, q));
                    out.extend(classes.same_path(q, &d.b));
                    out
                }
                None => Vec::new(),
            }
        }
    }
}

/// One document for [`group_under`]: its id and its class (`None`: no decision names its key).
pub(crate) type Node = (u64, Option<usize>);

/// What [`group_under`] decided.
#[derive(Debug, Default)]
pub(crate) struct Grouped {
    /// The groups (each sorted, the list by first member).
    pub(crate) groups: Vec<Vec<u64>>,
    /// The soft edges taken, in input order.
    pub(crate) taken: Vec<(u64, u64)>,
    /// The soft edges held back, with the decision that held each.
    pub(crate) held: Vec<((u64, u64), KeyPair)>,
}

/// The groups of `nodes` under the decisions: the documents of one class joined first, then
/// each soft edge in order, taken unless it would join two groups whose classes have a `distinct`
/// decision between them. Edges naming a document not in `nodes` are ignored.
pub(crate) fn group_under(classes: &Classes, nodes: &[Node], soft: &[(u64, u64)]) -> Grouped {
    let index: HashMap<u64, usize> = nodes.iter().enumerate().map(|(i, n)| (n.0, i)).collect();
    let mut parent: Vec<usize> = (0..nodes.len()).collect();
    let mut held_classes: Vec<BTreeSet<usize>> = nodes.iter().map(|n| n.1.into_iter().collect()).collect();
    let union = |parent: &mut Vec<usize>, held: &mut Vec<BTreeSet<usize>>, x: usize, y: usize| {
        let (rx, ry) = (find(parent, x), find(parent, y));
        if rx != ry {
            let (keep, gone) = (rx.min(ry), rx.max(ry));
            parent[gone] = keep;
            let moved = std::mem::take(&mut held[gone]);
            held[keep].extend(moved);
        }
    };
    let mut first_of_class: HashMap<usize, usize> = HashMap::new();
    for (i, n) in nodes.iter().enumerate() {
        if let Some(c) = n.1 {
            match first_of_class.get(&c) {
                Some(&j) => union(&mut parent, &mut held_classes, j, i),
                None => {
                    first_of_class.insert(c, i);
                }
            }
        }
    }
    let mut out = Grouped::default();
    for &(a, b) in soft {
        let (Some(&x), Some(&y)) = (index.get(&a), index.get(&b)) else {
            continue;
        };
        let (rx, ry) = (find(&mut parent, x), find(&mut parent, y));
        if rx != ry {
            if let Some(p) = classes.blocking(&held_classes[rx], &held_classes[ry]) {
                out.held.push(((a, b), p.clone()));
                continue;
            }
            union(&mut parent, &mut held_classes, x, y);
        }
        out.taken.push((a, b));
    }
    let mut by_root: BTreeMap<usize, Vec<u64>> = BTreeMap::new();
    for (i, n) in nodes.iter().enumerate() {
        let r = find(&mut parent, i);
        by_root.entry(r).or_default().push(n.0);
    }
    out.groups = by_root
        .into_values()
        .map(|mut g| {
            g.sort_unstable();
            g
        })
        .collect();
    out.groups.sort_unstable();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn dec(a: &str, b: &str, kind: DecisionKind) -> Decision {
        let (a, b) = key_pair(a, b);
        Decision {
            a,
            b,
            decision: kind,
            at_ms: 0,
            author: None,
            reason: None,
        }
    }

    /// Relabels every `max(x, y)` as `min(x, y)`; returns whether the two labels differed.
    fn merge_labels<'a>(labels: impl IntoIterator<Item = &'a mut usize>, x: usize, y: usize) -> bool {
        if x == y {
            return false;
        }
        let (keep, gone) = (x.min(y), x.max(y));
        for l in labels {
            if *l == gone {
                *l = keep;
            }
        }
        true
    }

    /// A label per node (one node per key), nodes whose keys a `same` decision names together sharing one, by repeated relaxation.
    fn node_labels(keys: &[String], decisions: &[Decision]) -> Vec<usize> {
        let mut label: Vec<usize> = (0..keys.len()).collect();
        loop {
            let mut changed = false;
            for d in decisions.iter().filter(|d| d.decision == DecisionKind::Same) {
                let ia = keys.iter().position(|k| *k == d.a);
                let ib = keys.iter().position(|k| *k == d.b);
                if let (Some(x), Some(y)) = (ia, ib) {
                    let (lx, ly) = (label[x], label[y]);
                    changed |= merge_labels(label.iter_mut(), lx, ly);
                }
            }
            if !changed {
                return label;
            }
        }
    }

    /// The class of every decided key: the closure of the `same` decisions over keys, absent ones included.
    fn key_classes(decisions: &[Decision]) -> HashMap<String, usize> {
        let mut key_class: HashMap<String, usize> = HashMap::new();
        let all_keys: BTreeSet<&String> = decisions.iter().flat_map(|d| [&d.a, &d.b]).collect();
        for (i, k) in all_keys.iter().enumerate() {
            key_class.insert((*k).clone(), i);
        }
        loop {
            let mut changed = false;
            for d in decisions.iter().filter(|d| d.decision == DecisionKind::Same) {
                let (x, y) = (key_class[&d.a], key_class[&d.b]);
                changed |= merge_labels(key_class.values_mut(), x, y);
            }
            if !changed {
                return key_class;
            }
        }
    }

    /// The brute-force model: the same-closure by repeated relaxation over the raw decisions, a
    /// group's keys checked against every `distinct` decision, edges taken one by one.
    fn brute(keys: &[String], decisions: &[Decision], soft: &[(u64, u64)]) -> (Vec<Vec<u64>>, Vec<(u64, u64)>) {
        let n = keys.len();
        let mut label = node_labels(keys, decisions);
        // Nodes of one class share a label, also when the keys joining them are absent.
        let key_class = key_classes(decisions);
        for i in 0..n {
            for j in 0..n {
                if let (Some(ci), Some(cj)) = (key_class.get(&keys[i]), key_class.get(&keys[j])) {
                    if ci == cj {
                        let (li, lj) = (label[i], label[j]);
                        merge_labels(label.iter_mut(), li, lj);
                    }
                }
            }
        }
        let violates = |label: &[usize], la: usize, lb: usize| {
            decisions.iter().filter(|d| d.decision == DecisionKind::Distinct).any(|d| {
                (0..n).any(|i| {
                    (0..n).any(|j| {
                        (label[i] == la && label[j] == lb || label[i] == lb && label[j] == la)
                            && key_class.get(&keys[i]) == key_class.get(&d.a)
                            && key_class.get(&keys[j]) == key_class.get(&d.b)
                    })
                })
            })
        };
        let mut taken = Vec::new();
        for &(a, b) in soft {
            let (lx, ly) = (label[a as usize], label[b as usize]);
            if lx != ly && violates(&label, lx, ly) {
                continue;
            }
            merge_labels(label.iter_mut(), lx, ly);
            taken.push((a, b));
        }
        let mut groups: BTreeMap<usize, Vec<u64>> = BTreeMap::new();
        for (i, l) in label.iter().enumerate() {
            groups.entry(*l).or_default().push(i as u64);
        }
        let mut g: Vec<Vec<u64>> = groups.into_values().collect();
        g.sort_unstable();
        (g, taken)
    }

    /// Documents, decisions (a, b, distinct), soft edges.
    type Scenario = (usize, Vec<(usize, usize, bool)>, Vec<(u64, u64)>);

    /// Random consistent decisions over `nkeys` keys (each refused one left out, as the engine
    /// refuses it), `n` live documents (keys `k0..`), soft edges.
    fn scenario() -> impl Strategy<Value = Scenario> {
        (2usize..9).prop_flat_map(|n| {
            (
                Just(n),
                proptest::collection::vec((0..n + 3, 0..n + 3, any::<bool>()), 0..8),
                proptest::collection::vec((0..n as u64, 0..n as u64), 0..14),
            )
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn group_under_equals_brute_force((n, raw, soft) in scenario()) {
            let keys: Vec<String> = (0..n).map(|i| format!("k{i}")).collect();
            let mut decisions: BTreeMap<KeyPair, Decision> = BTreeMap::new();
            for (a, b, same) in raw {
                if a == b {
                    continue;
                }
                let d = dec(&format!("k{a}"), &format!("k{b}"), if same { DecisionKind::Same } else { DecisionKind::Distinct });
                if contradiction(&decisions, &d).is_empty() {
                    decisions.insert(key_pair(&d.a, &d.b), d);
                }
            }
            // No accepted set of decisions contradicts itself.
            for d in decisions.values() {
                prop_assert!(contradiction(&decisions, d).is_empty());
            }
            let soft: Vec<(u64, u64)> = soft.into_iter().filter(|(a, b)| a != b).collect();
            let classes = Classes::build(decisions.values());
            let nodes: Vec<Node> = keys.iter().enumerate().map(|(i, k)| (i as u64, classes.class(k))).collect();
            let got = group_under(&classes, &nodes, &soft);
            let ds: Vec<Decision> = decisions.values().cloned().collect();
            let (groups, taken) = brute(&keys, &ds, &soft);
            prop_assert_eq!(&got.groups, &groups);
            prop_assert_eq!(&got.taken, &taken);
            prop_assert_eq!(got.taken.len() + got.held.len(), soft.len());
            // Every held edge names a distinct decision between its two final groups' classes.
            let group_of = |id: u64| got.groups.iter().position(|g| g.contains(&id)).unwrap();
            for ((a, b), (p, q)) in &got.held {
                prop_assert_ne!(group_of(*a), group_of(*b));
                prop_assert_eq!(&decisions[&key_pair(p, q)].decision, &DecisionKind::Distinct);
            }
        }

        #[test]
        fn contradiction_names_a_chain_that_exists((n, raw, _soft) in scenario()) {
            let mut decisions: BTreeMap<KeyPair, Decision> = BTreeMap::new();
            for (a, b, same) in raw {
                if a == b || n == 0 {
                    continue;
                }
                let d = dec(&format!("k{a}"), &format!("k{b}"), if same { DecisionKind::Same } else { DecisionKind::Distinct });
                let ev = contradiction(&decisions, &d);
                if ev.is_empty() {
                    decisions.insert(key_pair(&d.a, &d.b), d);
                } else {
                    // The evidence is a list of decisions that exist, and it holds the opposite kind.
                    for p in &ev {
                        prop_assert!(decisions.contains_key(p));
                    }
                    let distincts = ev.iter().filter(|p| decisions[*p].decision == DecisionKind::Distinct).count();
                    match d.decision {
                        DecisionKind::Same => prop_assert_eq!(distincts, 1),
                        DecisionKind::Distinct => prop_assert_eq!(distincts, 0),
                    }
                }
            }
        }
    }

    #[test]
    fn a_bridge_joins_its_first_edge_and_is_held_from_the_other() {
        let ds = [dec("a", "b", DecisionKind::Distinct)];
        let classes = Classes::build(ds.iter());
        let nodes = [(0, classes.class("a")), (1, classes.class("b")), (2, None)];
        let g = group_under(&classes, &nodes, &[(2, 0), (2, 1)]);
        assert_eq!(g.groups, vec![vec![0, 2], vec![1]]);
        assert_eq!(g.held, vec![((2, 1), key_pair("a", "b"))]);
    }

    #[test]
    fn same_keeps_a_class_together_through_an_absent_key() {
        let ds = [dec("a", "b", DecisionKind::Same), dec("b", "c", DecisionKind::Same)];
        let classes = Classes::build(ds.iter());
        // b is absent: a and c still one group, with no edge at all.
        let g = group_under(&classes, &[(0, classes.class("a")), (2, classes.class("c"))], &[]);
        assert_eq!(g.groups, vec![vec![0, 2]]);
        let ev = contradiction(
            &ds.iter().map(|d| (key_pair(&d.a, &d.b), d.clone())).collect(),
            &dec("a", "c", DecisionKind::Distinct),
        );
        assert_eq!(ev, vec![key_pair("a", "b"), key_pair("b", "c")]);
    }
}
