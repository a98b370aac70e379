//! The `console` global. `log`/`info`/`debug`/`dir` write to stdout (fd 1),
//! `warn`/`error` to stderr (fd 2); the host captures both fds. Each call is
//! exactly one write of one line, formatted like Node (strings raw, `%s`/`%d`
//! /... substitutions, everything else through the shared inspector), and is
//! flushed immediately so nothing sits in a Rust buffer across calls (the host
//! may snapshot memory between calls and must not see half-written output).

use std::io::Write;

use rquickjs::{Ctx, Function, Object, Value, prelude::Rest};

use crate::{engine, inspect};

#[derive(Clone, Copy)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// Write `text` plus a newline to the given stream. Write errors (e.g. the host
/// closed the fd) are ignored: logging must never fail a cell.
pub fn write_line(stream: Stream, text: &str) {
    let mut buf = Vec::with_capacity(text.len() + 1);
    buf.extend_from_slice(text.as_bytes());
    buf.push(b'\n');
    match stream {
        Stream::Stdout => {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(&buf);
            let _ = out.flush();
        }
        Stream::Stderr => {
            let mut err = std::io::stderr().lock();
            let _ = err.write_all(&buf);
            let _ = err.flush();
        }
    }
}

pub fn install<'js>(ctx: &Ctx<'js>, global: &Object<'js>) -> rquickjs::Result<()> {
    let console = Object::new(ctx.clone())?;
    let methods = [
        ("log", Stream::Stdout),
        ("info", Stream::Stdout),
        ("debug", Stream::Stdout),
        ("dir", Stream::Stdout),
        ("warn", Stream::Stderr),
        ("error", Stream::Stderr),
    ];
    for (name, stream) in methods {
        let f = Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, args: Rest<Value<'js>>| -> rquickjs::Result<()> {
                // Formatting can run user code (getters, toString) and can be
                // interrupted; its exception propagates to the caller as-is.
                let line = inspect::format_args(&ctx, args.0)?;
                write_line(stream, &line);
                Ok(())
            },
        )?;
        f.set_name(name)?;
        // Enumerable, like Node's console methods.
        console.set(name, f)?;
    }
    engine::define_builtin(ctx, global, "console", console.into_value())
}
