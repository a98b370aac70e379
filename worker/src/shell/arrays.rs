//! bash's indexed arrays, as the session keeps them: element 0 of an array is the shell
//! variable of the same name (in [`super::ShellState::vars`], so `$a` and `a=x` are element 0,
//! as in bash), and the other elements live here, with their total size kept so that the
//! variables' bound ([`super::exec::MAX_VARS`]) is checked in constant time per assignment.

use std::collections::BTreeMap;

/// What one element costs besides its bytes (its index and its share of the map), so that
/// millions of empty elements count against the variables' bound too.
const ELEMENT_OVERHEAD: usize = 48;

/// The elements past 0 of every array, by name; a name is here once it is an array (`a=()`,
/// `declare -a a`), even with no element past 0.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Arrays {
    map: BTreeMap<String, BTreeMap<usize, String>>,
    /// Bytes of all names and elements held here.
    bytes: usize,
}

impl Arrays {
    /// Whether `name` is an array.
    pub fn is_array(&self, name: &str) -> bool {
        self.map.contains_key(name)
    }

    /// The elements past 0 of `name`, by index.
    pub fn rest(&self, name: &str) -> Option<&BTreeMap<usize, String>> {
        self.map.get(name)
    }

    /// Bytes held by every array's elements past 0 (and their names).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Makes `name` an array (keeping its elements if it is one).
    pub fn declare(&mut self, name: &str) {
        if !self.map.contains_key(name) {
            self.bytes += name.len();
            self.map.insert(name.to_string(), BTreeMap::new());
        }
    }

    /// What an element of this value counts for.
    pub fn element_size(value: &str) -> usize {
        value.len() + ELEMENT_OVERHEAD
    }

    /// The size of element `index` (past 0) of `name`, 0 when unset.
    pub fn size_of(&self, name: &str, index: usize) -> usize {
        self.map
            .get(name)
            .and_then(|m| m.get(&index))
            .map_or(0, |v| Self::element_size(v))
    }

    /// Sets element `index` (past 0) of `name`, making it an array.
    pub fn set(&mut self, name: &str, index: usize, value: String) {
        self.declare(name);
        self.bytes -= self.size_of(name, index);
        self.bytes += Self::element_size(&value);
        if let Some(m) = self.map.get_mut(name) {
            m.insert(index, value);
        }
    }

    /// Unsets element `index` (past 0) of `name`.
    pub fn unset(&mut self, name: &str, index: usize) {
        self.bytes -= self.size_of(name, index);
        if let Some(m) = self.map.get_mut(name) {
            m.remove(&index);
        }
    }

    /// Makes `name` a scalar again (or nothing): drops its elements past 0.
    pub fn remove(&mut self, name: &str) {
        if let Some(m) = self.map.remove(name) {
            self.bytes -= name.len() + m.values().map(|v| Self::element_size(v)).sum::<usize>();
        }
    }

    /// Takes `name`'s elements past 0 out (for `local`, which puts them back).
    pub fn take(&mut self, name: &str) -> Option<BTreeMap<usize, String>> {
        let m = self.map.get(name).cloned();
        self.remove(name);
        m
    }

    /// Puts back what [`Arrays::take`] took.
    pub fn restore(&mut self, name: &str, saved: Option<BTreeMap<usize, String>>) {
        self.remove(name);
        if let Some(m) = saved {
            self.declare(name);
            for (i, v) in m {
                self.set(name, i, v);
            }
        }
    }
}
