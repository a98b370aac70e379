//! The MCP channel on stdin and stdout, read and written by the async runtime itself.
//!
//! tokio's `stdin()`/`stdout()` (what rmcp's `transport::stdio()` uses) do every read and write
//! on a blocking thread, so each message crosses threads twice: about a seventh of the
//! supervisor's time in a warm call, measured with `perf`. MCP clients start servers with
//! pipes (Python's SDK, Claude Desktop) or socket pairs (Node's child_process, libuv), which
//! can be polled like any socket: those are registered with the runtime in non-blocking mode.
//! Anything else (a terminal, a file) keeps tokio's blocking stdio.

use std::io;
use std::os::fd::{AsFd, OwnedFd};

use rustix::fs::FileType;
use tokio::io::{AsyncRead, AsyncWrite};

/// The read half of the channel.
pub type Input = Box<dyn AsyncRead + Send + Unpin>;
/// The write half of the channel.
pub type Output = Box<dyn AsyncWrite + Send + Unpin>;

/// What a standard stream is connected to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Pipe,
    Socket,
    Other,
}

fn kind_of(fd: impl AsFd) -> Kind {
    match rustix::fs::fstat(fd).map(|stat| FileType::from_raw_mode(stat.st_mode)) {
        Ok(FileType::Fifo) => Kind::Pipe,
        Ok(FileType::Socket) => Kind::Socket,
        _ => Kind::Other,
    }
}

/// A copy of standard stream `fd` (the original stays open for whoever else writes to it,
/// such as a panic message on stderr).
fn duplicate(fd: impl AsFd) -> io::Result<OwnedFd> {
    rustix::io::fcntl_dupfd_cloexec(fd, 3).map_err(io::Error::from)
}

/// The channel: stdin and stdout polled by the runtime when they are pipes or sockets, tokio's
/// blocking stdio otherwise (or when registering fails). Must be called inside the runtime.
pub fn channel() -> (Input, Output) {
    let input = async_input().unwrap_or_else(|e| {
        tracing::debug!(error = %e, "stdin is read on a blocking thread");
        Box::new(tokio::io::stdin())
    });
    let output = async_output().unwrap_or_else(|e| {
        tracing::debug!(error = %e, "stdout is written on a blocking thread");
        Box::new(tokio::io::stdout())
    });
    (input, output)
}

fn async_input() -> io::Result<Input> {
    let stdin = io::stdin();
    match kind_of(&stdin) {
        Kind::Pipe => Ok(Box::new(tokio::net::unix::pipe::Receiver::from_owned_fd(
            duplicate(&stdin)?,
        )?)),
        Kind::Socket => Ok(Box::new(socket(duplicate(&stdin)?)?)),
        Kind::Other => Err(io::Error::other("not a pipe or a socket")),
    }
}

fn async_output() -> io::Result<Output> {
    let stdout = io::stdout();
    match kind_of(&stdout) {
        Kind::Pipe => Ok(Box::new(tokio::net::unix::pipe::Sender::from_owned_fd(
            duplicate(&stdout)?,
        )?)),
        Kind::Socket => Ok(Box::new(socket(duplicate(&stdout)?)?)),
        Kind::Other => Err(io::Error::other("not a pipe or a socket")),
    }
}

/// A Unix stream socket registered with the runtime.
fn socket(fd: OwnedFd) -> io::Result<tokio::net::UnixStream> {
    let stream = std::os::unix::net::UnixStream::from(fd);
    stream.set_nonblocking(true)?;
    tokio::net::UnixStream::from_std(stream)
}

#[cfg(test)]
mod tests {
    use std::os::unix::net::UnixStream;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    #[test]
    fn pipes_and_sockets_are_told_apart_from_files() {
        let (read, write) = std::io::pipe().unwrap();
        assert_eq!(kind_of(&read), Kind::Pipe);
        assert_eq!(kind_of(&write), Kind::Pipe);
        let (a, _b) = UnixStream::pair().unwrap();
        assert_eq!(kind_of(&a), Kind::Socket);
        let file = tempfile::tempfile().unwrap();
        assert_eq!(kind_of(&file), Kind::Other);
    }

    #[tokio::test]
    async fn a_socket_pair_carries_the_channel_both_ways() {
        let (ours, theirs) = UnixStream::pair().unwrap();
        let mut ours = socket(OwnedFd::from(ours)).unwrap();
        let mut theirs = socket(OwnedFd::from(theirs)).unwrap();
        ours.write_all(b"{\"jsonrpc\":\"2.0\"}\n").await.unwrap();
        let mut line = [0u8; 18];
        theirs.read_exact(&mut line).await.unwrap();
        assert_eq!(&line, b"{\"jsonrpc\":\"2.0\"}\n");
    }
}
