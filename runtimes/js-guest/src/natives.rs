//! The native functions the JavaScript library (`stdlib.js`, `helpers.js`)
//! is built on: file system operations over `std::fs` (and wasi-libc's
//! `stat`), open-file handles, environment, script evaluation, printf, and
//! sleeping.
//!
//! They are handed to the library as one object and never become globals.
//! The contract is deliberately narrow: arguments have already been coerced
//! by the library (strings are strings, numbers are numbers), and a failed
//! operation *returns* `-errno` (a negative number) instead of throwing, so
//! the library can map it to QuickJS's conventions (`-errno`, `[value, err]`,
//! `null`) or to a descriptive Error. Only programming errors throw: an
//! invalid or closed file handle (TypeError, as in quickjs-libc) and a handle
//! that a snapshot restore made stale.

use std::ffi::CString;
use std::fs;
use std::io::Write;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rquickjs::function::IntoJsFunc;
use rquickjs::{Array, Ctx, Exception, Function, IntoJs, Object, TypedArray, Value, prelude::Rest};

use crate::errno::{self, Errno};
use crate::files::{self, BadHandle};
use crate::paths::{self, Place};
use crate::{file_class, printf, util};

type JsResult<'js> = rquickjs::Result<Value<'js>>;

/// `writeFile` flag: append instead of truncating.
const WRITE_APPEND: i32 = 1;
/// `writeFile` flag: create missing parent directories first.
const WRITE_PARENTS: i32 = 2;

/// `evalScript` flag: allow top-level await (the result is a Promise).
const EVAL_ASYNC: i32 = 1;
/// `evalScript` flag: hide the caller's frames from error backtraces.
const EVAL_BARRIER: i32 = 2;

/// Longest single `os.sleep`, in ms. The host also wakes a sleeper at the
/// execution deadline; this only bounds a sleep past it.
const MAX_SLEEP_MS: f64 = 24.0 * 3600.0 * 1000.0;

/// Symlinks followed by `realpath` before giving up with ELOOP (Linux's
/// MAXSYMLINKS).
const MAX_SYMLINKS: usize = 40;

/// Build the object of native functions.
pub fn create<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<Object<'js>> {
    file_class::register(ctx)?;
    let n = Object::new(ctx.clone())?;
    // Paths and directories.
    def(ctx, &n, "resolve", js_resolve)?;
    def(ctx, &n, "mounts", |ctx: Ctx<'js>| {
        paths::mounts().into_js(&ctx)
    })?;
    def(ctx, &n, "getcwd", |ctx: Ctx<'js>| {
        string(&ctx, &paths::cwd())
    })?;
    def(ctx, &n, "chdir", |ctx: Ctx<'js>, path: String| {
        status(&ctx, chdir(&path))
    })?;
    def(ctx, &n, "readdir", js_readdir)?;
    def(ctx, &n, "stat", js_stat)?;
    def(
        ctx,
        &n,
        "mkdir",
        |ctx: Ctx<'js>, path: String, recursive: bool| status(&ctx, mkdir(&path, recursive)),
    )?;
    def(ctx, &n, "remove", |ctx: Ctx<'js>, path: String| {
        status(&ctx, remove(&path))
    })?;
    def(
        ctx,
        &n,
        "rename",
        |ctx: Ctx<'js>, from: String, to: String| status(&ctx, rename(&from, &to)),
    )?;
    def(ctx, &n, "realpath", |ctx: Ctx<'js>, path: String| {
        let r = paths::resolve(&path).and_then(|abs| realpath(&abs));
        string_or_errno(&ctx, r)
    })?;
    def(ctx, &n, "readlink", |ctx: Ctx<'js>, path: String| {
        string_or_errno(&ctx, readlink(&path))
    })?;
    def(
        ctx,
        &n,
        "utimes",
        |ctx: Ctx<'js>, path: String, at: f64, mt: f64| status(&ctx, utimes(&path, at, mt)),
    )?;
    // Whole files.
    def(ctx, &n, "readFile", js_read_file)?;
    def(ctx, &n, "writeFile", js_write_file)?;
    // Open files (std.open, os.open).
    def(ctx, &n, "fopen", js_fopen)?;
    def(ctx, &n, "fopenFlags", js_fopen_flags)?;
    def(ctx, &n, "fstate", |id: f64| files::state(handle(id)))?;
    def(ctx, &n, "fileNew", js_file_new)?;
    def(ctx, &n, "fileId", js_file_id)?;
    def(ctx, &n, "fileDetach", |file: Value<'js>| {
        file_class::detach(&file)
    })?;
    def(ctx, &n, "fclose", js_fclose)?;
    def(ctx, &n, "fread", js_fread)?;
    def(ctx, &n, "fgetline", js_fgetline)?;
    def(ctx, &n, "fgetByte", js_fget_byte)?;
    def(ctx, &n, "fwrite", js_fwrite)?;
    def(ctx, &n, "ftell", js_ftell)?;
    def(ctx, &n, "fseek", js_fseek)?;
    def(ctx, &n, "fflags", js_fflags)?;
    def(ctx, &n, "fclearerr", js_fclearerr)?;
    // Environment, errors, evaluation, time.
    def(ctx, &n, "strerror", |ctx: Ctx<'js>, code: i32| {
        string(&ctx, &errno::describe(code))
    })?;
    def(ctx, &n, "getenv", js_getenv)?;
    def(ctx, &n, "setenv", js_setenv)?;
    def(ctx, &n, "unsetenv", js_unsetenv)?;
    def(ctx, &n, "getenviron", js_getenviron)?;
    def(ctx, &n, "evalScript", js_eval_script)?;
    def(ctx, &n, "encode", |ctx: Ctx<'js>, s: Value<'js>| {
        bytes_of(&ctx, &s).and_then(|b| uint8_array(&ctx, b))
    })?;
    def(
        ctx,
        &n,
        "sprintf",
        |ctx: Ctx<'js>, args: Rest<Value<'js>>| {
            let bytes = printf::format(&ctx, &args.0)?;
            string(&ctx, &String::from_utf8_lossy(&bytes))
        },
    )?;
    def(ctx, &n, "gc", |ctx: Ctx<'js>| ctx.run_gc())?;
    def(ctx, &n, "sleep", js_sleep)?;
    def(ctx, &n, "now", || {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    })?;
    Ok(n)
}

/// Add native function `f` to `obj` as `name`.
fn def<'js, P, F>(ctx: &Ctx<'js>, obj: &Object<'js>, name: &str, f: F) -> rquickjs::Result<()>
where
    F: IntoJsFunc<'js, P> + 'js,
{
    let f = Function::new(ctx.clone(), f)?;
    f.set_name(name)?;
    obj.set(name, f)
}

// --- the natives that need more than a line -----------------------------------

fn js_resolve<'js>(ctx: Ctx<'js>, path: String) -> JsResult<'js> {
    string_or_errno(&ctx, paths::resolve(&path))
}

fn js_readdir<'js>(ctx: Ctx<'js>, path: String) -> JsResult<'js> {
    let entries = match readdir(&path) {
        Ok(entries) => entries,
        Err(e) => return Ok(fail(&ctx, e)),
    };
    let arr = Array::new(ctx.clone())?;
    for (i, (name, kind)) in entries.into_iter().enumerate() {
        let pair = Array::new(ctx.clone())?;
        pair.set(0, name)?;
        pair.set(1, kind)?;
        arr.set(i, pair)?;
    }
    Ok(arr.into_value())
}

fn js_stat<'js>(ctx: Ctx<'js>, path: String, follow: bool) -> JsResult<'js> {
    match stat(&path, follow) {
        Ok(st) => stat_object(&ctx, &st),
        Err(e) => Ok(fail(&ctx, e)),
    }
}

fn js_read_file<'js>(ctx: Ctx<'js>, path: String, binary: bool) -> JsResult<'js> {
    let bytes = match paths::resolve_mounted(&path).and_then(|abs| read_file(&abs)) {
        Ok(b) => b,
        Err(e) => return Ok(fail(&ctx, e)),
    };
    if binary {
        uint8_array(&ctx, bytes)
    } else {
        string(&ctx, &String::from_utf8_lossy(&bytes))
    }
}

fn js_write_file<'js>(ctx: Ctx<'js>, path: String, data: Value<'js>, flags: i32) -> JsResult<'js> {
    let bytes = bytes_of(&ctx, &data)?;
    Ok(status(&ctx, write_file(&path, &bytes, flags)))
}

fn js_fopen<'js>(ctx: Ctx<'js>, path: String, mode: String) -> JsResult<'js> {
    if !files::valid_mode(&mode) {
        return Err(Exception::throw_type(&ctx, "invalid file mode"));
    }
    let r = paths::resolve_mounted(&path).and_then(|abs| files::open(&abs, &mode));
    Ok(number_or_errno(&ctx, r))
}

fn js_fopen_flags<'js>(ctx: Ctx<'js>, path: String, flags: i32) -> JsResult<'js> {
    let r = paths::resolve_mounted(&path).and_then(|abs| files::open_flags(&abs, flags));
    Ok(number_or_errno(&ctx, r))
}

/// A FILE object for handle `id` with prototype `proto`.
fn js_file_new<'js>(ctx: Ctx<'js>, proto: Object<'js>, id: f64) -> JsResult<'js> {
    file_class::new_file(&ctx, &proto, handle(id))
}

/// The handle id of a FILE; TypeError "invalid file handle" (quickjs-libc's
/// words) for a closed FILE or anything else.
fn js_file_id<'js>(ctx: Ctx<'js>, file: Value<'js>) -> JsResult<'js> {
    match file_class::id_of(&file) {
        Some(id) => Ok(Value::new_number(ctx.clone(), id as f64)),
        None => Err(Exception::throw_type(&ctx, "invalid file handle")),
    }
}

fn js_fclose<'js>(ctx: Ctx<'js>, id: f64) -> JsResult<'js> {
    let r = files::close(handle(id)).map_err(|b| bad_handle(&ctx, b))?;
    Ok(status(&ctx, r))
}

/// Up to `max` bytes (`max < 0`: to the end), as a string or a Uint8Array.
fn js_fread<'js>(ctx: Ctx<'js>, id: f64, max: f64, as_string: bool) -> JsResult<'js> {
    let max = (max >= 0.0).then_some(max as usize);
    match files::read(handle(id), max).map_err(|b| bad_handle(&ctx, b))? {
        Ok(bytes) if as_string => string(&ctx, &String::from_utf8_lossy(&bytes)),
        Ok(bytes) => uint8_array(&ctx, bytes),
        Err(e) => Ok(fail(&ctx, e)),
    }
}

fn js_fgetline<'js>(ctx: Ctx<'js>, id: f64) -> JsResult<'js> {
    match files::getline(handle(id)).map_err(|b| bad_handle(&ctx, b))? {
        Ok(Some(line)) => string(&ctx, &String::from_utf8_lossy(&line)),
        Ok(None) => Ok(Value::new_null(ctx.clone())),
        Err(e) => Ok(fail(&ctx, e)),
    }
}

/// The next byte, or -1 at end of file (C's `EOF`).
fn js_fget_byte<'js>(ctx: Ctx<'js>, id: f64) -> JsResult<'js> {
    let b = files::get_byte(handle(id)).map_err(|b| bad_handle(&ctx, b))?;
    Ok(Value::new_int(ctx.clone(), b.map_or(-1, i32::from)))
}

fn js_fwrite<'js>(ctx: Ctx<'js>, id: f64, data: Value<'js>) -> JsResult<'js> {
    let bytes = bytes_of(&ctx, &data)?;
    let r = files::write(handle(id), &bytes).map_err(|b| bad_handle(&ctx, b))?;
    Ok(number_or_errno(&ctx, r.map(|n| n as u64)))
}

fn js_ftell<'js>(ctx: Ctx<'js>, id: f64) -> JsResult<'js> {
    let r = files::tell(handle(id)).map_err(|b| bad_handle(&ctx, b))?;
    Ok(number_or_errno(&ctx, r))
}

fn js_fseek<'js>(ctx: Ctx<'js>, id: f64, offset: f64, whence: i32) -> JsResult<'js> {
    let r = files::seek(handle(id), offset as i64, whence).map_err(|b| bad_handle(&ctx, b))?;
    Ok(number_or_errno(&ctx, r))
}

/// Bit 0: end of file; bit 1: error.
fn js_fflags<'js>(ctx: Ctx<'js>, id: f64) -> JsResult<'js> {
    let (eof, error) = files::flags(handle(id)).map_err(|b| bad_handle(&ctx, b))?;
    let bits = i32::from(eof) | (i32::from(error) << 1);
    Ok(Value::new_int(ctx.clone(), bits))
}

fn js_fclearerr<'js>(ctx: Ctx<'js>, id: f64) -> JsResult<'js> {
    files::clear_flags(handle(id)).map_err(|b| bad_handle(&ctx, b))?;
    Ok(Value::new_undefined(ctx.clone()))
}

fn js_getenv<'js>(ctx: Ctx<'js>, name: String) -> JsResult<'js> {
    match std::env::var_os(&name) {
        Some(v) => string(&ctx, &v.to_string_lossy()),
        None => Ok(Value::new_undefined(ctx.clone())),
    }
}

fn js_setenv(name: String, value: String) {
    if valid_env_name(&name) && !value.contains('\0') {
        // SAFETY: the guest is single-threaded, so nothing reads the
        // environment concurrently.
        unsafe { std::env::set_var(name, value) };
    }
}

fn js_unsetenv(name: String) {
    if valid_env_name(&name) {
        // SAFETY: as for set_var, the guest is single-threaded.
        unsafe { std::env::remove_var(name) };
    }
}

fn js_getenviron<'js>(ctx: Ctx<'js>) -> JsResult<'js> {
    let obj = Object::new(ctx.clone())?;
    for (k, v) in std::env::vars_os() {
        obj.set(k.to_string_lossy().as_ref(), v.to_string_lossy().as_ref())?;
    }
    Ok(obj.into_value())
}

/// Evaluate `source` as global (sloppy) script code named `filename`.
fn js_eval_script<'js>(
    ctx: Ctx<'js>,
    source: String,
    filename: String,
    flags: i32,
) -> JsResult<'js> {
    let mut opts = rquickjs::context::EvalOptions::default();
    opts.global = true;
    opts.strict = false;
    opts.promise = flags & EVAL_ASYNC != 0;
    opts.backtrace_barrier = flags & EVAL_BARRIER != 0;
    opts.filename = Some(filename);
    ctx.eval_with_options(source, opts)
}

fn js_sleep(ms: f64) {
    if ms > 0.0 {
        // The host's poll_oneoff shadow wakes us at the deadline or on
        // cancel; the pending interrupt then stops the script.
        std::thread::sleep(Duration::from_secs_f64(ms.min(MAX_SLEEP_MS) / 1000.0));
    }
}

// --- conversions -------------------------------------------------------------

fn string<'js>(ctx: &Ctx<'js>, s: &str) -> JsResult<'js> {
    Ok(rquickjs::String::from_str(ctx.clone(), s)?.into_value())
}

fn uint8_array<'js>(ctx: &Ctx<'js>, bytes: Vec<u8>) -> JsResult<'js> {
    Ok(TypedArray::<u8>::new(ctx.clone(), bytes)?.into_value())
}

fn string_or_errno<'js>(ctx: &Ctx<'js>, r: Result<String, Errno>) -> JsResult<'js> {
    match r {
        Ok(s) => string(ctx, &s),
        Err(e) => Ok(fail(ctx, e)),
    }
}

fn number_or_errno<'js>(ctx: &Ctx<'js>, r: Result<u64, Errno>) -> Value<'js> {
    match r {
        Ok(n) => Value::new_number(ctx.clone(), n as f64),
        Err(e) => fail(ctx, e),
    }
}

fn fail<'js>(ctx: &Ctx<'js>, e: Errno) -> Value<'js> {
    Value::new_number(ctx.clone(), e.negated())
}

/// 0, or `-errno`.
fn status<'js>(ctx: &Ctx<'js>, r: Result<(), Errno>) -> Value<'js> {
    match r {
        Ok(()) => Value::new_int(ctx.clone(), 0),
        Err(e) => fail(ctx, e),
    }
}

/// Handle ids are non-negative integers; anything else is no handle (and
/// maps to one that does not exist).
fn handle(id: f64) -> u64 {
    if id >= 0.0 && id.fract() == 0.0 && id < 9.0e15 {
        id as u64
    } else {
        u64::MAX
    }
}

fn bad_handle(ctx: &Ctx<'_>, bad: BadHandle) -> rquickjs::Error {
    match bad {
        BadHandle::Closed => Exception::throw_type(ctx, "invalid file handle"),
        BadHandle::Stdio => Exception::throw_type(ctx, "cannot close stdio"),
        BadHandle::Stale => stale_error(ctx),
    }
}

/// An Error (code EBADF) for a handle opened before the sandbox was restored
/// from its snapshot.
fn stale_error(ctx: &Ctx<'_>) -> rquickjs::Error {
    const MESSAGE: &str = "EBADF: this file was opened before an execution failed and the \
        sandbox was restored to its last good state; the file is closed now, open it again";
    let Ok(e) = Exception::from_message(ctx.clone(), MESSAGE) else {
        return rquickjs::Error::Exception;
    };
    let obj = e.as_object();
    if obj.set("code", "EBADF").is_err() || obj.set("errno", errno::EBADF.0).is_err() {
        return rquickjs::Error::Exception;
    }
    e.throw()
}

/// The bytes of a string (UTF-8) or a Uint8Array (the library converts
/// other binary views to Uint8Array first).
fn bytes_of<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> rquickjs::Result<Vec<u8>> {
    if v.is_string() {
        return Ok(util::string_lossy(ctx, v).into_bytes());
    }
    if let Some(arr) = v
        .as_object()
        .and_then(|o| TypedArray::<u8>::from_object(o.clone()).ok())
    {
        // SAFETY: the slice is copied before any JavaScript can run again, so
        // nothing can detach or resize the buffer while it is borrowed.
        let bytes = unsafe { arr.as_bytes() }.map(<[u8]>::to_vec);
        return Ok(bytes.unwrap_or_default());
    }
    Err(Exception::throw_type(
        ctx,
        "expected a string or a Uint8Array",
    ))
}

fn valid_env_name(name: &str) -> bool {
    !name.is_empty() && !name.contains('=') && !name.contains('\0')
}

// --- operations ----------------------------------------------------------------

fn chdir(path: &str) -> Result<(), Errno> {
    let abs = paths::resolve(path)?;
    match paths::place(&abs) {
        Place::Root => {}
        Place::Outside => return Err(errno::ENOENT),
        Place::Mounted => {
            if !fs::metadata(&abs)?.is_dir() {
                return Err(errno::ENOTDIR);
            }
        }
    }
    paths::set_cwd(abs);
    Ok(())
}

/// Entry kinds as the library sees them.
const KIND_FILE: i32 = 0;
const KIND_DIR: i32 = 1;
const KIND_SYMLINK: i32 = 2;
const KIND_OTHER: i32 = 3;

/// `(name, kind)` of every entry except `.` and `..`, in directory order.
/// `/` lists the top-level mount points.
fn readdir(path: &str) -> Result<Vec<(String, i32)>, Errno> {
    let abs = paths::resolve(path)?;
    match paths::place(&abs) {
        Place::Root => {
            let mut names: Vec<String> = paths::mounts()
                .iter()
                .filter_map(|m| m.trim_start_matches('/').split('/').next())
                .map(str::to_owned)
                .collect();
            names.dedup();
            return Ok(names.into_iter().map(|n| (n, KIND_DIR)).collect());
        }
        Place::Outside => return Err(errno::ENOENT),
        Place::Mounted => {}
    }
    let mut out = Vec::new();
    for entry in fs::read_dir(&abs)? {
        let entry = entry?;
        let kind = match entry.file_type() {
            Ok(t) if t.is_dir() => KIND_DIR,
            Ok(t) if t.is_file() => KIND_FILE,
            Ok(t) if t.is_symlink() => KIND_SYMLINK,
            _ => KIND_OTHER,
        };
        out.push((entry.file_name().to_string_lossy().into_owned(), kind));
    }
    Ok(out)
}

/// `stat`/`lstat` through wasi-libc, which fills in what `std::fs::Metadata`
/// keeps private on WASI (dev, ino, nlink, ctime).
fn stat(path: &str, follow: bool) -> Result<libc::stat, Errno> {
    let abs = paths::resolve(path)?;
    match paths::place(&abs) {
        Place::Root => {
            // SAFETY: `libc::stat` is plain old data; all-zero is a valid value.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            st.st_mode = libc::S_IFDIR;
            st.st_nlink = 1;
            return Ok(st);
        }
        Place::Outside => return Err(errno::ENOENT),
        Place::Mounted => {}
    }
    let c = CString::new(abs).map_err(|_| errno::EINVAL)?;
    // SAFETY: all-zero is a valid `libc::stat`, and it is overwritten anyway.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is NUL-terminated and `st` is a writable `struct stat`,
    // the exact arguments stat(2)/lstat(2) take.
    let rc = unsafe {
        if follow {
            libc::stat(c.as_ptr(), &mut st)
        } else {
            libc::lstat(c.as_ptr(), &mut st)
        }
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    Ok(st)
}

fn stat_object<'js>(ctx: &Ctx<'js>, st: &libc::stat) -> JsResult<'js> {
    let ms = |t: &libc::timespec| t.tv_sec as f64 * 1000.0 + (t.tv_nsec / 1_000_000) as f64;
    let obj = Object::new(ctx.clone())?;
    obj.set("dev", st.st_dev as f64)?;
    obj.set("ino", st.st_ino as f64)?;
    obj.set("mode", st.st_mode as f64)?;
    obj.set("nlink", st.st_nlink as f64)?;
    obj.set("uid", st.st_uid as f64)?;
    obj.set("gid", st.st_gid as f64)?;
    obj.set("rdev", st.st_rdev as f64)?;
    obj.set("size", st.st_size as f64)?;
    obj.set("blocks", st.st_blocks as f64)?;
    obj.set("atime", ms(&st.st_atim))?;
    obj.set("mtime", ms(&st.st_mtim))?;
    obj.set("ctime", ms(&st.st_ctim))?;
    Ok(obj.into_value())
}

fn mkdir(path: &str, recursive: bool) -> Result<(), Errno> {
    let abs = paths::resolve_mounted(path)?;
    if recursive {
        fs::create_dir_all(&abs)?;
    } else {
        fs::create_dir(&abs)?;
    }
    Ok(())
}

fn rename(from: &str, to: &str) -> Result<(), Errno> {
    let from = paths::resolve_mounted(from)?;
    let to = paths::resolve_mounted(to)?;
    fs::rename(from, to)?;
    Ok(())
}

fn readlink(path: &str) -> Result<String, Errno> {
    let abs = paths::resolve_mounted(path)?;
    Ok(fs::read_link(abs)?.to_string_lossy().into_owned())
}

/// C `remove`: a file, a symlink or an empty directory.
fn remove(path: &str) -> Result<(), Errno> {
    let abs = paths::resolve_mounted(path)?;
    if fs::symlink_metadata(&abs)?.is_dir() {
        fs::remove_dir(&abs)?;
    } else {
        fs::remove_file(&abs)?;
    }
    Ok(())
}

/// The canonical path: `..` resolved and every symlink followed.
fn realpath(abs: &str) -> Result<String, Errno> {
    let mut pending: Vec<String> = abs.split('/').rev().map(str::to_owned).collect();
    let mut done = String::new();
    let mut followed = 0;
    while let Some(part) = pending.pop() {
        match part.as_str() {
            "" | "." => continue,
            ".." => {
                let cut = done.rfind('/').unwrap_or(0);
                done.truncate(cut);
                continue;
            }
            _ => {}
        }
        let candidate = format!("{done}/{part}");
        if paths::place(&candidate) != Place::Mounted {
            return Err(errno::ENOENT);
        }
        if !fs::symlink_metadata(&candidate)?.file_type().is_symlink() {
            done = candidate;
            continue;
        }
        followed += 1;
        if followed > MAX_SYMLINKS {
            return Err(errno::ELOOP);
        }
        let target = fs::read_link(&candidate)?;
        let target = target.to_string_lossy();
        if target.starts_with('/') {
            done.clear();
        }
        pending.extend(target.split('/').rev().map(str::to_owned));
    }
    if done.is_empty() {
        done.push('/');
    }
    Ok(done)
}

fn utimes(path: &str, atime_ms: f64, mtime_ms: f64) -> Result<(), Errno> {
    let abs = paths::resolve_mounted(path)?;
    let c = CString::new(abs).map_err(|_| errno::EINVAL)?;
    let ts = |ms: f64| {
        let ms = if ms.is_finite() { ms } else { 0.0 };
        let secs = (ms / 1000.0).floor();
        libc::timespec {
            tv_sec: secs as libc::time_t,
            tv_nsec: ((ms - secs * 1000.0) * 1_000_000.0) as libc::c_long,
        }
    };
    let times = [ts(atime_ms), ts(mtime_ms)];
    // SAFETY: `c` is NUL-terminated and `times` is the two-element array
    // utimensat(2) reads; AT_FDCWD makes wasi-libc resolve the absolute path
    // against its preopens.
    let rc = unsafe { libc::utimensat(libc::AT_FDCWD, c.as_ptr(), times.as_ptr(), 0) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    Ok(())
}

/// The whole file. A directory is `EISDIR` (WASI reports reading one as
/// `EBADF`, which would send the reader looking for a file handle bug).
fn read_file(abs: &str) -> Result<Vec<u8>, Errno> {
    fs::read(abs).map_err(|e| {
        let e = Errno::from(e);
        if e == errno::EBADF && fs::metadata(abs).is_ok_and(|m| m.is_dir()) {
            errno::EISDIR
        } else {
            e
        }
    })
}

fn write_file(path: &str, bytes: &[u8], flags: i32) -> Result<(), Errno> {
    let abs = paths::resolve_mounted(path)?;
    if flags & WRITE_PARENTS != 0
        && let Some(cut) = abs.rfind('/')
        && cut > 0
        && paths::place(&abs[..cut]) == Place::Mounted
    {
        fs::create_dir_all(&abs[..cut])?;
    }
    let mut options = fs::OpenOptions::new();
    if flags & WRITE_APPEND != 0 {
        options.append(true).create(true);
    } else {
        options.write(true).create(true).truncate(true);
    }
    let mut file = options.open(&abs)?;
    file.write_all(bytes)?;
    Ok(())
}
