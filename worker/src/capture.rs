//! Capped capture of what the guest writes to stdout and stderr.
//!
//! Wasmtime's `MemoryOutputPipe` traps the guest once it is full, which would kill the session
//! for printing too much. This capture keeps the first `cap` bytes of an execution, drops the
//! rest, remembers that it did, and always tells the guest the write succeeded.

/// One stream's bytes for the current execution.
#[derive(Debug)]
pub struct Capture {
    buf: Vec<u8>,
    cap: usize,
    truncated: bool,
}

impl Capture {
    pub fn new(cap: usize) -> Self {
        Self {
            buf: Vec::new(),
            cap,
            truncated: false,
        }
    }

    /// Appends what fits under the cap; `false` when some of `bytes` did not fit.
    pub fn push(&mut self, bytes: &[u8]) -> bool {
        let room = self.cap.saturating_sub(self.buf.len());
        let fits = bytes.len() <= room;
        if !fits {
            self.truncated = true;
        }
        self.buf.extend_from_slice(&bytes[..bytes.len().min(room)]);
        fits
    }

    /// Hands over the execution's bytes and truncation flag and starts empty again.
    pub fn take(&mut self) -> (Vec<u8>, bool) {
        let truncated = std::mem::replace(&mut self.truncated, false);
        (std::mem::take(&mut self.buf), truncated)
    }

    pub fn clear(&mut self) {
        self.buf.clear();
        self.truncated = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_first_bytes_and_flags_the_rest() {
        let mut c = Capture::new(5);
        assert!(c.push(b"abc"));
        assert!(!c.push(b"defg"));
        assert!(!c.push(b"h"));
        assert_eq!(c.take(), (b"abcde".to_vec(), true));
        c.push(b"xy");
        assert_eq!(c.take(), (b"xy".to_vec(), false));
    }
}
