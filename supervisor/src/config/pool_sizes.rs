//! How many idle workers the pool keeps per runtime (`SANDBOX_WORKER_POOL`): a setting, so it
//! lives with the configuration; the pool itself is the `pool` module's.

use std::collections::BTreeMap;
use std::str::FromStr;

use sandbox_protocol::Runtime;

/// How many idle workers the pool keeps per runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolSizes(BTreeMap<Runtime, usize>);

impl PoolSizes {
    /// The most one runtime's pool may hold: a pool is a head start, not capacity.
    pub const MAX_PER_RUNTIME: usize = 32;

    /// No pool at all: every worker starts when its session needs it.
    pub fn none() -> Self {
        Self(BTreeMap::new())
    }

    /// How many idle workers of `runtime` are kept ready.
    pub fn of(&self, runtime: Runtime) -> usize {
        self.0.get(&runtime).copied().unwrap_or(0)
    }

    /// Every runtime with a pool, and its size.
    pub fn iter(&self) -> impl Iterator<Item = (Runtime, usize)> + '_ {
        self.0.iter().map(|(r, n)| (*r, *n)).filter(|(_, n)| *n > 0)
    }
}

impl Default for PoolSizes {
    /// Two of each runtime, so two sessions created at once both start at once (an idle
    /// Python worker started from the memory image uses about 8.5 MiB of its own).
    fn default() -> Self {
        Self(BTreeMap::from([
            (Runtime::Python, 2),
            (Runtime::JavaScript, 2),
        ]))
    }
}

impl FromStr for PoolSizes {
    type Err = String;

    /// `python=2,javascript=2`; a runtime left out gets no pool, and `0`
    /// or an empty string means no pool at all.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let mut sizes = BTreeMap::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            if part == "0" {
                continue;
            }
            let (name, count) = part
                .split_once('=')
                .ok_or_else(|| format!("{part:?} is not RUNTIME=COUNT"))?;
            let runtime = Runtime::from_name(name.trim())
                .ok_or_else(|| format!("unknown runtime {name:?} (python, javascript)"))?;
            let count: usize = count
                .trim()
                .parse()
                .map_err(|_| format!("{count:?} is not a count"))?;
            if count > Self::MAX_PER_RUNTIME {
                return Err(format!(
                    "{count} pooled {runtime} workers is more than {}",
                    Self::MAX_PER_RUNTIME
                ));
            }
            if sizes.insert(runtime, count).is_some() {
                return Err(format!("{runtime} is given twice"));
            }
        }
        Ok(Self(sizes))
    }
}

impl std::fmt::Display for PoolSizes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self.iter().map(|(r, n)| format!("{r}={n}")).collect();
        if parts.is_empty() {
            f.write_str("0")
        } else {
            f.write_str(&parts.join(","))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_sizes_parse_strictly() {
        let sizes: PoolSizes = "python=3, javascript=1".parse().unwrap();
        assert_eq!(sizes.of(Runtime::Python), 3);
        assert_eq!(sizes.of(Runtime::JavaScript), 1);
        assert_eq!(sizes.to_string(), "python=3,javascript=1");
        let old: PoolSizes = "python-scientific=1,javascript=0".parse().unwrap();
        assert_eq!(old.to_string(), "python=1", "the old name of CPython 3.15");
        for none in ["", "0", " 0 "] {
            let sizes: PoolSizes = none.parse().unwrap();
            assert_eq!(sizes, PoolSizes::none(), "{none:?}");
            assert_eq!(sizes.to_string(), "0");
        }
        assert_eq!(PoolSizes::default().to_string(), "python=2,javascript=2");
        for bad in [
            "python",
            "ruby=1",
            "python=-1",
            "python=x",
            "python=1,python=2",
            "python=1,python-scientific=2",
            "javascript=33",
        ] {
            assert!(bad.parse::<PoolSizes>().is_err(), "{bad:?} must be refused");
        }
    }
}
