//! Tree walks, for `find`, `du`, `grep -r`, `chmod -R` and `cp -r`.
//!
//! [`walk`] goes depth first, entries in name order ([`Order`]), through the confined filesystem
//! ([`Fs::list`](crate::shell::path::Fs::list) and `lstat`): a symlink below the start is an
//! entry of its own and never entered, so a tree holding a link out of its mount is walked
//! without leaving it. It is not `Root::walk` of the confined layer because the commands need
//! what that one leaves out: the deadline checked per entry, a listing error reported where it
//! happens (`find: 'd': Permission denied`), `/` and the directories above the mounts, and
//! entries handed over one at a time instead of a whole tree in memory.

use crate::shell::exec::{Abort, Ctx};
use crate::shell::path::{Access, FsError, Meta, Resolved, join};

/// A node met on a walk.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub node: Resolved,
    /// Its own metadata (a symlink is reported as one).
    pub meta: Meta,
    /// The path as the command prints it: the operand, then `/name` per level.
    pub shown: String,
    /// 0 for the start.
    pub depth: usize,
}

impl Node {
    /// The start of a walk: an operand, resolved (following a symlink only when `follow`).
    ///
    /// # Errors
    /// When it cannot be resolved or examined.
    pub(crate) fn start(ctx: &Ctx<'_, '_>, arg: &str, follow: bool) -> Result<Self, FsError> {
        Self::at(ctx, ctx.resolve(arg, Access::Read, follow)?, arg)
    }

    /// The start of a walk at a node resolved already, shown as `shown`.
    ///
    /// # Errors
    /// When it cannot be examined.
    pub(crate) fn at(ctx: &Ctx<'_, '_>, node: Resolved, shown: &str) -> Result<Self, FsError> {
        let meta = ctx.fs().lstat(&node)?;
        Ok(Self {
            node,
            meta,
            shown: shown.to_string(),
            depth: 0,
        })
    }

    pub(crate) fn is_dir(&self) -> bool {
        self.meta.is_dir()
    }
}

/// What a walk tells its visitor.
pub(crate) enum Event<'n> {
    /// A node, before anything below it.
    Enter(&'n Node),
    /// A directory that was entered, after everything below it.
    Leave(&'n Node),
    /// A directory whose entries could not be listed (it is still left).
    Unlistable(&'n Node, FsError),
}

/// In which order the entries of a directory are visited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Order {
    /// By name, directories among the rest (`find`, `du`).
    ByName,
    /// Files (by name) before directories (by name), as `grep -r` has always searched.
    FilesFirst,
}

/// What the visitor wants next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Go below this node, if it is a directory.
    Into,
    /// Do not go below it.
    Over,
    /// End the walk.
    Stop,
}

/// Walks the tree below `start` (see the module docs). Returns `false` when the visitor
/// stopped it.
///
/// # Errors
/// The deadline, a cancel, or the visitor's own abort.
pub(crate) fn walk(
    ctx: &mut Ctx<'_, '_>,
    start: Node,
    order: Order,
    mut visit: impl FnMut(&mut Ctx<'_, '_>, Event<'_>) -> Result<Step, Abort>,
) -> Result<bool, Abort> {
    enum Todo {
        Enter(Node),
        Leave(Node),
    }
    let mut todo = vec![Todo::Enter(start)];
    while let Some(next) = todo.pop() {
        ctx.check()?;
        let node = match next {
            Todo::Leave(node) => {
                if visit(ctx, Event::Leave(&node))? == Step::Stop {
                    return Ok(false);
                }
                continue;
            }
            Todo::Enter(node) => node,
        };
        match visit(ctx, Event::Enter(&node))? {
            Step::Stop => return Ok(false),
            Step::Into if node.is_dir() => {}
            _ => continue,
        }
        let entries = match ctx.fs().list(&node.node) {
            Ok(entries) => entries,
            Err(e) => {
                if visit(ctx, Event::Unlistable(&node, e))? == Step::Stop {
                    return Ok(false);
                }
                todo.push(Todo::Leave(node));
                continue;
            }
        };
        let mut children: Vec<Node> = entries
            .into_iter()
            .filter_map(|e| {
                let meta = ctx.fs().lstat(&e.node).ok()?;
                let shown = join(&node.shown, &e.name);
                let depth = node.depth + 1;
                Some(Node {
                    node: e.node,
                    meta,
                    shown,
                    depth,
                })
            })
            .collect();
        if order == Order::FilesFirst {
            children.sort_by_key(Node::is_dir);
        }
        todo.push(Todo::Leave(node));
        todo.extend(children.into_iter().rev().map(Todo::Enter));
    }
    Ok(true)
}
