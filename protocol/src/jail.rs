//! The worker's jail as both sides name it: its layers ([`Layer`]), the sets of layers the
//! supervisor asks for and requires ([`LayerSet`], written `seccomp,landlock` on a command line
//! and in `SANDBOX_REQUIRE`), and what a worker, or `sandbox-worker jail-check`, reports it
//! applied ([`JailReport`]).
//!
//! The types travel in bincode frames ([`crate::ReadyInfo`]) and as JSON (the `jail-check`
//! report), so they use only serde's default, externally tagged representations.

use serde::{Deserialize, Serialize};

/// One layer of the jail a worker puts itself in (in `sandbox-worker`'s `jail` module).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Layer {
    /// A seccomp allow-list of system calls: no exec, no fork, no sockets, no rlimit raising.
    Seccomp,
    /// Landlock: files only beneath the session's own directories, `/data` and the module
    /// cache; no TCP; no abstract sockets or signals out of the worker.
    Landlock,
    /// An own user and network namespace: no network interface but a down loopback.
    Netns,
    /// RLIMIT_NPROC: a bound on the worker's threads (forks are seccomp's job).
    Nproc,
    /// Every descriptor the worker inherited above stderr is closed before anything runs.
    Fds,
}

impl Layer {
    /// Every layer, in the order the worker applies them.
    pub const ALL: [Layer; 5] = [
        Layer::Fds,
        Layer::Netns,
        Layer::Nproc,
        Layer::Landlock,
        Layer::Seccomp,
    ];

    /// The name used on command lines, in environment variables and in messages.
    pub fn name(self) -> &'static str {
        match self {
            Layer::Seccomp => "seccomp",
            Layer::Landlock => "landlock",
            Layer::Netns => "netns",
            Layer::Nproc => "nproc",
            Layer::Fds => "fds",
        }
    }

    /// The layer called `name` (see [`Layer::name`]).
    pub fn from_name(name: &str) -> Option<Layer> {
        Layer::ALL.into_iter().find(|l| l.name() == name)
    }

    fn bit(self) -> u8 {
        match self {
            Layer::Seccomp => 1,
            Layer::Landlock => 2,
            Layer::Netns => 4,
            Layer::Nproc => 8,
            Layer::Fds => 16,
        }
    }
}

impl std::fmt::Display for Layer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of layers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LayerSet(u8);

impl LayerSet {
    /// No layer.
    pub const EMPTY: LayerSet = LayerSet(0);

    /// Every layer.
    pub fn all() -> Self {
        Layer::ALL.into_iter().collect()
    }

    pub fn contains(self, layer: Layer) -> bool {
        self.0 & layer.bit() != 0
    }

    pub fn insert(&mut self, layer: Layer) {
        self.0 |= layer.bit();
    }

    pub fn remove(&mut self, layer: Layer) {
        self.0 &= !layer.bit();
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The layers of `self` that are not in `other`.
    pub fn without(self, other: LayerSet) -> LayerSet {
        LayerSet(self.0 & !other.0)
    }

    /// The layers in application order.
    pub fn iter(self) -> impl Iterator<Item = Layer> {
        Layer::ALL.into_iter().filter(move |l| self.contains(*l))
    }

    /// Parses `seccomp,landlock,...`: names separated by commas, blanks ignored, empty for none.
    ///
    /// # Errors
    /// The first unknown name, quoted, with the known ones.
    pub fn parse(text: &str) -> Result<LayerSet, String> {
        let mut set = LayerSet::EMPTY;
        for name in text.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            match Layer::from_name(&name.to_ascii_lowercase()) {
                Some(layer) => set.insert(layer),
                None => {
                    let known: Vec<&str> = Layer::ALL.iter().map(|l| l.name()).collect();
                    return Err(format!(
                        "unknown jail layer {name:?} (known: {})",
                        known.join(", ")
                    ));
                }
            }
        }
        Ok(set)
    }
}

impl FromIterator<Layer> for LayerSet {
    fn from_iter<I: IntoIterator<Item = Layer>>(iter: I) -> Self {
        let mut set = LayerSet::EMPTY;
        for layer in iter {
            set.insert(layer);
        }
        set
    }
}

/// `seccomp,landlock`, the form [`LayerSet::parse`] reads.
impl std::fmt::Display for LayerSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.iter().map(Layer::name).collect();
        f.write_str(&names.join(","))
    }
}

/// How one layer ended up in a process.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum LayerState {
    /// In force; the text says how, for people (`"ABI 7"`, `"own network namespace"`).
    Enforced(String),
    /// Asked for but not in force, and why (the kernel lacks it, the operator disabled it).
    Unavailable(String),
    /// Not asked for.
    #[default]
    NotRequested,
}

impl LayerState {
    pub fn is_enforced(&self) -> bool {
        matches!(self, LayerState::Enforced(_))
    }

    /// `"enforced (ABI 7)"`, `"unavailable: ..."`, `"not requested"`.
    pub fn describe(&self) -> String {
        match self {
            LayerState::Enforced(how) if how.is_empty() => "enforced".to_owned(),
            LayerState::Enforced(how) => format!("enforced ({how})"),
            LayerState::Unavailable(why) => format!("unavailable: {why}"),
            LayerState::NotRequested => "not requested".to_owned(),
        }
    }
}

/// What a worker's jail consists of, layer by layer.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct JailReport {
    pub seccomp: LayerState,
    pub landlock: LayerState,
    pub netns: LayerState,
    pub nproc: LayerState,
    pub fds: LayerState,
    /// RLIMIT_NPROC as set (0 when the layer is not in force).
    pub nproc_limit: u64,
}

impl JailReport {
    pub fn state(&self, layer: Layer) -> &LayerState {
        match layer {
            Layer::Seccomp => &self.seccomp,
            Layer::Landlock => &self.landlock,
            Layer::Netns => &self.netns,
            Layer::Nproc => &self.nproc,
            Layer::Fds => &self.fds,
        }
    }

    pub fn state_mut(&mut self, layer: Layer) -> &mut LayerState {
        match layer {
            Layer::Seccomp => &mut self.seccomp,
            Layer::Landlock => &mut self.landlock,
            Layer::Netns => &mut self.netns,
            Layer::Nproc => &mut self.nproc,
            Layer::Fds => &mut self.fds,
        }
    }

    /// The layers in force.
    pub fn enforced(&self) -> LayerSet {
        Layer::ALL
            .into_iter()
            .filter(|l| self.state(*l).is_enforced())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layer_sets_parse_and_print() {
        let set = LayerSet::parse(" seccomp, Landlock,,netns ").unwrap();
        assert!(set.contains(Layer::Seccomp) && set.contains(Layer::Landlock));
        assert!(!set.contains(Layer::Nproc));
        assert_eq!(set.to_string(), "netns,landlock,seccomp");
        assert_eq!(LayerSet::parse(&set.to_string()).unwrap(), set);
        assert_eq!(LayerSet::parse("").unwrap(), LayerSet::EMPTY);
        assert!(
            LayerSet::parse("seccomp,apparmor")
                .unwrap_err()
                .contains("apparmor")
        );
        assert_eq!(LayerSet::all().iter().count(), 5);
        assert_eq!(
            LayerSet::all().without(set).to_string(),
            "fds,nproc".to_owned()
        );
    }

    #[test]
    fn reports_survive_json() {
        let report = JailReport {
            seccomp: LayerState::Enforced(String::new()),
            landlock: LayerState::Enforced("ABI 7".into()),
            netns: LayerState::Unavailable("no user namespaces".into()),
            ..JailReport::default()
        };
        let json = serde_json::to_string(&report).unwrap();
        assert_eq!(serde_json::from_str::<JailReport>(&json).unwrap(), report);
        assert_eq!(report.landlock.describe(), "enforced (ABI 7)");
        assert_eq!(report.enforced().to_string(), "landlock,seccomp");
    }
}
