//! Routing between sites: a circuit crosses the fewest trunks from its
//! transmitter's site to its receiver's, ties broken by trunk order.

/// Trunk ports between sites: (from site, to site, output port at `from`).
pub(super) struct Routes {
    pub(super) links: Vec<(String, String, usize)>,
}

impl Routes {
    /// The trunk ports a cell crosses from site `a` to site `b`: the fewest
    /// trunks, ties broken by trunk order (breadth-first search).
    pub(super) fn path(&self, a: &str, b: &str) -> Option<Vec<usize>> {
        let mut came: Vec<(String, Option<usize>)> = vec![(a.to_string(), None)];
        let mut frontier = 0;
        while frontier < came.len() {
            let here = came[frontier].0.clone();
            if here == b {
                let mut ports = Vec::new();
                let mut at = frontier;
                while let Some(link) = came[at].1 {
                    let (from, _, port) = &self.links[link];
                    ports.push(*port);
                    at = came
                        .iter()
                        .position(|(site, _)| site == from)
                        .expect("visited");
                }
                ports.reverse();
                return Some(ports);
            }
            for (i, (from, to, _)) in self.links.iter().enumerate() {
                if *from == here && !came.iter().any(|(site, _)| site == to) {
                    came.push((to.clone(), Some(i)));
                }
            }
            frontier += 1;
        }
        None
    }
}
