//! Length-prefixed bincode frames, in async (supervisor) and blocking (worker) flavours.
//!
//! The codec lives only here so that replacing bincode (unmaintained since 3.0.0 became a
//! tombstone) touches one file. Contract, as in mini-redis: `Ok(None)` is a clean end of stream
//! between frames; a stream that ends inside a frame is [`FrameError::Truncated`].

use std::io::{self, Read, Write};

use serde::{Serialize, de::DeserializeOwned};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::FrameError;

/// Largest payload either side accepts. Replies carry at most two output captures (each capped
/// well below this by the worker) plus metadata; requests carry source code. 64 MiB leaves room
/// for generous caps while bounding what a corrupt length prefix can make us allocate.
pub const MAX_FRAME_LEN: usize = 64 << 20;

fn config() -> impl bincode::config::Config {
    bincode::config::standard().with_limit::<MAX_FRAME_LEN>()
}

/// Encodes `msg` into a complete frame (length prefix included).
///
/// # Errors
/// [`FrameError::Encode`] on a codec failure, [`FrameError::TooLarge`] if the payload would not fit.
pub fn encode<T: Serialize>(msg: &T) -> Result<Vec<u8>, FrameError> {
    let mut buf = vec![0u8; 4];
    bincode::serde::encode_into_std_write(msg, &mut buf, config()).map_err(FrameError::Encode)?;
    let len = buf.len() - 4;
    if len > MAX_FRAME_LEN {
        return Err(FrameError::TooLarge {
            len,
            max: MAX_FRAME_LEN,
        });
    }
    let prefix = u32::try_from(len)
        .expect("bounded by MAX_FRAME_LEN")
        .to_be_bytes();
    buf[..4].copy_from_slice(&prefix);
    Ok(buf)
}

/// Decodes one payload (without its length prefix).
///
/// # Errors
/// [`FrameError::Decode`] for garbage, [`FrameError::TrailingBytes`] for a payload longer than
/// the message it holds.
pub fn decode<T: DeserializeOwned>(payload: &[u8]) -> Result<T, FrameError> {
    let (msg, used) =
        bincode::serde::decode_from_slice(payload, config()).map_err(FrameError::Decode)?;
    if used != payload.len() {
        return Err(FrameError::TrailingBytes(payload.len() - used));
    }
    Ok(msg)
}

fn checked_len(prefix: [u8; 4]) -> Result<usize, FrameError> {
    let len = u32::from_be_bytes(prefix) as usize;
    if len > MAX_FRAME_LEN {
        return Err(FrameError::TooLarge {
            len,
            max: MAX_FRAME_LEN,
        });
    }
    Ok(len)
}

/// Reads the 4-byte prefix; `Ok(None)` on a clean EOF before its first byte.
fn read_prefix_blocking(reader: &mut impl Read) -> Result<Option<[u8; 4]>, FrameError> {
    let mut prefix = [0u8; 4];
    let mut filled = 0;
    while filled < 4 {
        match reader.read(&mut prefix[filled..]) {
            Ok(0) if filled == 0 => return Ok(None),
            Ok(0) => return Err(FrameError::Truncated),
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(Some(prefix))
}

/// Reads one frame from a blocking reader.
///
/// # Errors
/// See [`FrameError`]; the length is checked before the payload buffer is allocated.
pub fn read_frame_blocking<T: DeserializeOwned>(
    reader: &mut impl Read,
) -> Result<Option<T>, FrameError> {
    let Some(prefix) = read_prefix_blocking(reader)? else {
        return Ok(None);
    };
    let mut payload = vec![0u8; checked_len(prefix)?];
    reader
        .read_exact(&mut payload)
        .map_err(|e| match e.kind() {
            io::ErrorKind::UnexpectedEof => FrameError::Truncated,
            _ => FrameError::Io(e),
        })?;
    decode(&payload).map(Some)
}

/// Writes one frame to a blocking writer and flushes it.
///
/// # Errors
/// Encoding or I/O failures.
pub fn write_frame_blocking<T: Serialize>(
    writer: &mut impl Write,
    msg: &T,
) -> Result<(), FrameError> {
    writer.write_all(&encode(msg)?)?;
    writer.flush()?;
    Ok(())
}

/// Reads one frame from an async reader.
///
/// # Cancel safety
/// Not cancel safe: dropping the future mid-frame loses the bytes read so far. Callers own the
/// reading half in one task and never race this future against another read.
///
/// # Errors
/// See [`FrameError`]; the length is checked before the payload buffer is allocated.
pub async fn read_frame<T: DeserializeOwned>(
    reader: &mut (impl AsyncRead + Unpin),
) -> Result<Option<T>, FrameError> {
    let mut prefix = [0u8; 4];
    let mut filled = 0;
    while filled < 4 {
        match reader.read(&mut prefix[filled..]).await? {
            0 if filled == 0 => return Ok(None),
            0 => return Err(FrameError::Truncated),
            n => filled += n,
        }
    }
    // Read into spare capacity, not a zeroed buffer: state layers are hundreds of kilobytes
    // after every call.
    let len = checked_len(prefix)?;
    let mut payload = Vec::with_capacity(len);
    let read = (&mut *reader)
        .take(len as u64)
        .read_to_end(&mut payload)
        .await?;
    if read < len {
        return Err(FrameError::Truncated);
    }
    decode(&payload).map(Some)
}

/// Writes one frame to an async writer and flushes it.
///
/// # Errors
/// Encoding or I/O failures.
pub async fn write_frame<T: Serialize>(
    writer: &mut (impl AsyncWrite + Unpin),
    msg: &T,
) -> Result<(), FrameError> {
    writer.write_all(&encode(msg)?).await?;
    writer.flush().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::*;

    fn sample_result() -> Response {
        Response::Executed(ExecutionReport {
            execution_id: "exec-1".into(),
            stdout: b"42\n".to_vec(),
            stderr: vec![0xff, 0xfe, b'\n'],
            stdout_truncated: false,
            stderr_truncated: true,
            exit_code: 1,
            result: Some("'abc'".into()),
            error: Some(GuestError {
                kind: ErrorKind::Runtime,
                name: Some("ZeroDivisionError".into()),
                message: "division by zero".into(),
            }),
            fuel_consumed: 12_345,
            duration_us: 987,
            memory_bytes: 10 << 20,
            restart: Some(Restart {
                reason: "hard deadline".into(),
                state: StateAfterRestart::Lost,
            }),
            figures: vec![Figure {
                mime: "image/png".into(),
                data: vec![0x89, b'P', b'N', b'G'],
            }],
            written: vec!["plot.png".into(), "out/data.csv".into()],
            state_follows: false,
        })
    }

    #[test]
    fn round_trips_every_request() {
        let requests = [
            Request::Hello {
                protocol_version: crate::PROTOCOL_VERSION,
            },
            Request::Execute(ExecuteRequest::user(
                "e".into(),
                "print('ü')\n".into(),
                10_000_000_000,
                30_000,
            )),
            Request::Execute(ExecuteRequest {
                kind: ExecutionKind::Inspect,
                argv: vec!["script.py".into(), "--flag".into()],
                stdin: b"piped\n".to_vec(),
                ..ExecuteRequest::user("i".into(), String::new(), 1, 1)
            }),
            Request::Command(CommandRequest {
                execution_id: "c".into(),
                command: "ls -la | grep x > out.txt".into(),
                fuel: 1,
                timeout_ms: 2,
            }),
            Request::Cancel {
                execution_id: "e".into(),
            },
            Request::Shutdown,
        ];
        for req in requests {
            let frame = encode(&req).unwrap();
            let back: Request = decode(&frame[4..]).unwrap();
            assert_eq!(back, req);
        }
    }

    #[test]
    fn round_trips_responses_blocking_and_async() {
        let resp = sample_result();
        let mut buf = Vec::new();
        write_frame_blocking(&mut buf, &resp).unwrap();
        write_frame_blocking(
            &mut buf,
            &Response::Ready(ReadyInfo {
                language: Language::Python,
                runtime_version: "3.12.0".into(),
                startup_us: 1,
                from_image: true,
                forked: false,
                jail: crate::JailReport::default(),
            }),
        )
        .unwrap();
        let mut cursor = io::Cursor::new(buf.clone());
        assert_eq!(
            read_frame_blocking::<Response>(&mut cursor).unwrap(),
            Some(resp.clone())
        );
        assert!(matches!(
            read_frame_blocking::<Response>(&mut cursor).unwrap(),
            Some(Response::Ready(_))
        ));
        assert_eq!(
            read_frame_blocking::<Response>(&mut cursor).unwrap(),
            None,
            "clean EOF"
        );

        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut reader = &buf[..];
            assert_eq!(
                read_frame::<Response>(&mut reader).await.unwrap(),
                Some(resp)
            );
        });
    }

    #[test]
    fn oversized_length_is_refused_before_allocating() {
        let mut bytes = u32::MAX.to_be_bytes().to_vec();
        bytes.extend_from_slice(b"tiny");
        let err = read_frame_blocking::<Request>(&mut &bytes[..]).unwrap_err();
        assert!(matches!(err, FrameError::TooLarge { len, .. } if len == u32::MAX as usize));
    }

    #[test]
    fn truncated_frames_are_errors_not_eof() {
        let frame = encode(&Request::Shutdown).unwrap();
        for cut in 1..frame.len() {
            let err = read_frame_blocking::<Request>(&mut &frame[..cut]).unwrap_err();
            assert!(
                matches!(err, FrameError::Truncated),
                "cut at {cut}: {err:?}"
            );
        }
    }

    #[test]
    fn garbage_payloads_never_panic() {
        // A cheap deterministic generator: every length 0..64, many byte patterns.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for len in 0..64usize {
            for _ in 0..64 {
                let payload: Vec<u8> = (0..len)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        state as u8
                    })
                    .collect();
                let _ = decode::<Request>(&payload);
                let _ = decode::<Response>(&payload);
            }
        }
        // A huge declared string length inside a small payload must not allocate it.
        let mut hostile = vec![1u8]; // variant index of Execute
        hostile.extend_from_slice(&[0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]);
        assert!(decode::<Request>(&hostile).is_err());
    }

    #[test]
    fn trailing_bytes_are_rejected() {
        let mut frame = encode(&Request::Shutdown).unwrap();
        frame.push(0);
        assert!(matches!(
            decode::<Request>(&frame[4..]),
            Err(FrameError::TrailingBytes(1))
        ));
    }

    /// How long each fuzz target runs under `cargo test` (bolero's random engine):
    /// `SANDBOX_FUZZ_SECONDS`, 5 by default so CI stays quick. For long, coverage-guided runs
    /// see the README ("Fuzzing").
    fn fuzz_time() -> std::time::Duration {
        let seconds = std::env::var("SANDBOX_FUZZ_SECONDS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(5);
        std::time::Duration::from_secs(seconds)
    }

    /// Fuzz target: whatever bytes arrive on a worker's or the supervisor's socket, the frame
    /// reader answers with a message, a clean end or an error: it never panics, never allocates
    /// past the frame limit, and what it accepts re-encodes to a frame it accepts again.
    #[test]
    fn fuzz_frame_decoder() {
        bolero::check!()
            .with_type::<(bool, Vec<u8>)>()
            .with_test_time(fuzz_time())
            .for_each(|(prefixed, bytes)| {
                // Half the inputs get a valid length prefix, so the payload decoder is reached.
                let mut input = Vec::with_capacity(bytes.len() + 4);
                if *prefixed {
                    input.extend((bytes.len() as u32).to_be_bytes());
                }
                input.extend(bytes);
                if let Ok(Some(request)) = read_frame_blocking::<Request>(&mut &input[..]) {
                    let frame = encode(&request).expect("an accepted message encodes");
                    let again = read_frame_blocking::<Request>(&mut &frame[..]);
                    assert!(matches!(again, Ok(Some(_))), "{request:?}");
                }
                let _ = read_frame_blocking::<Response>(&mut &input[..]);
                let _ = decode::<Request>(bytes);
            });
    }
}
