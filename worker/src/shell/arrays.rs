//! bash's indexed arrays, as the session keeps them: element 0 of an array is the shell
//! variable of the same name (in [`super::ShellState::vars`], so `$a` and `a=x` are element 0,
//! as in bash), and the other elements live here, with their total size kept so that the
//! variables' bound ([`super::exec::MAX_VARS`]) is checked in constant time per assignment.
//! [`Elements`] joins the two halves again: every reader of an array goes through it.

use std::collections::{BTreeMap, BTreeSet};

/// What one element costs besides its bytes (its index and its share of the map), so that
/// millions of empty elements count against the variables' bound too.
const ELEMENT_OVERHEAD: usize = 48;

/// The elements past 0 of every array, by name; a name is here once it is an array (`a=()`,
/// `declare -a a`), even with no element past 0.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Arrays {
    map: BTreeMap<String, BTreeMap<usize, String>>,
    /// Arrays made by `declare -a NAME` and never assigned since: bash's declared but unset
    /// variable, which `declare -p` shows without `=()` and `set -u` counts as unbound in
    /// `${#NAME[@]}` (an array emptied by `NAME=()` or by unsetting its elements is set).
    unassigned: BTreeSet<String>,
    /// Bytes of all names and elements held here.
    bytes: usize,
}

impl Arrays {
    /// Whether `name` is an array.
    pub fn is_array(&self, name: &str) -> bool {
        self.map.contains_key(name)
    }

    /// The elements of `name`, `first` (its variable's value) being element 0.
    pub fn elements(&self, name: &str, first: Option<String>) -> Elements<'_> {
        Elements {
            first,
            rest: self.map.get(name),
            unassigned: self.unassigned.contains(name),
        }
    }

    /// The names of every array, in order.
    pub fn names(&self) -> impl Iterator<Item = &String> {
        self.map.keys()
    }

    /// Bytes held by every array's elements past 0 (and their names).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Makes `name` an array that is assigned (keeping its elements if it is one).
    pub fn declare(&mut self, name: &str) {
        self.unassigned.remove(name);
        if !self.map.contains_key(name) {
            self.bytes += name.len();
            self.map.insert(name.to_string(), BTreeMap::new());
        }
    }

    /// `declare -a NAME` of a name that is neither an array nor set: an array never assigned
    /// (see [`Arrays::unassigned`]) until its first assignment.
    pub fn declare_unassigned(&mut self, name: &str) {
        if !self.map.contains_key(name) {
            self.declare(name);
            self.unassigned.insert(name.to_string());
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
        self.unassigned.remove(name);
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

/// An array as its readers see it: element 0 (the variable's value, so a set scalar is an
/// array of one element) and the elements past 0, by index.
#[derive(Debug, Default)]
pub struct Elements<'a> {
    first: Option<String>,
    rest: Option<&'a BTreeMap<usize, String>>,
    /// Declared and never assigned ([`Arrays::declare_unassigned`]).
    unassigned: bool,
}

impl Elements<'_> {
    /// A scalar's (or an unset name's) elements: its value, if set, as element 0.
    pub fn scalar(value: Option<String>) -> Self {
        Self {
            first: value,
            rest: None,
            unassigned: false,
        }
    }

    /// Whether the array was declared (`declare -a NAME`) and never assigned.
    pub fn unassigned(&self) -> bool {
        self.unassigned
    }

    /// Element `at`.
    pub fn get(&self, at: usize) -> Option<&str> {
        match at {
            0 => self.first.as_deref(),
            _ => self.rest?.get(&at).map(String::as_str),
        }
    }

    /// The highest index set.
    pub fn last(&self) -> Option<usize> {
        let rest = self.rest.and_then(|m| m.keys().next_back()).copied();
        rest.or(self.first.as_ref().map(|_| 0))
    }

    /// The set elements in order of index.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &str)> {
        let first = self.first.as_deref().map(|v| (0, v));
        let rest = self.rest.into_iter().flatten();
        first.into_iter().chain(rest.map(|(i, v)| (*i, v.as_str())))
    }

    /// The set elements, owned (to read them while the shell changes).
    pub fn to_vec(&self) -> Vec<(usize, String)> {
        self.iter().map(|(i, v)| (i, v.to_owned())).collect()
    }
}
