//! The class of `FILE` objects (`std.open`, `std.in`, ...): QuickJS objects
//! whose opaque slot holds a handle id from `files.rs`, with a finalizer that
//! closes the handle when the script drops its last reference, as
//! quickjs-libc's FILE finalizer does. Because QuickJS counts references,
//! that happens at once, so a loop that opens files without closing them
//! does not run out of handles.
//!
//! The methods are JavaScript (`stdlib.js`, on the prototype it passes to
//! [`new_file`]); this module only creates the objects and maps them to ids.

use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, Ordering};

use rquickjs::{Ctx, Exception, Object, Value, qjs};

use crate::files;

/// The class id, 0 until [`register`] ran. In linear memory like the class
/// table it indexes (part of the runtime), so both survive a snapshot.
static CLASS_ID: AtomicU32 = AtomicU32::new(0);

/// Register the class with the runtime (once).
pub fn register(ctx: &Ctx<'_>) -> rquickjs::Result<()> {
    if CLASS_ID.load(Ordering::Relaxed) != 0 {
        return Ok(());
    }
    let def = qjs::JSClassDef {
        class_name: c"FILE".as_ptr(),
        finalizer: Some(finalize),
        gc_mark: None,
        call: None,
        exotic: std::ptr::null_mut(),
    };
    // SAFETY: the runtime is locked by the caller (we run inside
    // `Context::with`); JS_NewClass copies `def` (its name becomes an atom),
    // so neither needs to outlive the call.
    let ok = unsafe {
        let rt = qjs::JS_GetRuntime(ctx.as_raw().as_ptr());
        let mut id: qjs::JSClassID = 0;
        qjs::JS_NewClassID(rt, &mut id);
        let ok = qjs::JS_NewClass(rt, id, &def) == 0;
        if ok {
            CLASS_ID.store(id, Ordering::Relaxed);
        }
        ok
    };
    if ok {
        Ok(())
    } else {
        Err(Exception::throw_internal(
            ctx,
            "cannot register the FILE class",
        ))
    }
}

/// The opaque slot stores `id + 1`, so that null means "closed".
fn opaque_of(id: u64) -> Option<*mut c_void> {
    let slot = usize::try_from(id.checked_add(1)?).ok()?;
    Some(slot as *mut c_void)
}

/// A new FILE object for handle `id`, with prototype `proto`.
pub fn new_file<'js>(ctx: &Ctx<'js>, proto: &Object<'js>, id: u64) -> rquickjs::Result<Value<'js>> {
    let Some(opaque) = opaque_of(id) else {
        return Err(Exception::throw_range(ctx, "file handle id out of range"));
    };
    let raw = ctx.as_raw().as_ptr();
    // SAFETY: `proto` belongs to `ctx`; JS_NewObjectProtoClass returns a new
    // reference (or JS_EXCEPTION), which `Value::from_raw` takes over. The
    // class was registered by `register` (the library calls it first).
    let obj = unsafe {
        let v = qjs::JS_NewObjectProtoClass(raw, proto.as_raw(), CLASS_ID.load(Ordering::Relaxed));
        if qjs::JS_IsException(v) {
            return Err(rquickjs::Error::Exception);
        }
        Value::from_raw(ctx.clone(), v)
    };
    // SAFETY: `obj` is a live object of our class; the opaque is an integer
    // in pointer clothing, never dereferenced.
    unsafe { qjs::JS_SetOpaque(obj.as_raw(), opaque) };
    Ok(obj)
}

/// The handle id of a FILE object, or `None` for anything else (including a
/// FILE that was closed).
pub fn id_of(v: &Value<'_>) -> Option<u64> {
    // SAFETY: JS_GetOpaque only reads the object's class id and opaque slot,
    // and returns null for non-objects and objects of other classes.
    let slot = unsafe { qjs::JS_GetOpaque(v.as_raw(), CLASS_ID.load(Ordering::Relaxed)) } as usize;
    (slot != 0).then(|| slot as u64 - 1)
}

/// Mark a FILE object closed, so later method calls say "invalid file
/// handle" and the finalizer does not close its (old) id again.
pub fn detach(v: &Value<'_>) {
    if id_of(v).is_some() {
        // SAFETY: `v` is a live object of our class (id_of checked it).
        unsafe { qjs::JS_SetOpaque(v.as_raw(), std::ptr::null_mut()) };
    }
}

/// Class finalizer: close the handle of a FILE nobody references any more.
unsafe extern "C" fn finalize(_rt: *mut qjs::JSRuntime, val: qjs::JSValue) {
    // SAFETY: QuickJS calls this with an object of our class that is being
    // freed; reading its opaque slot is all we do with it.
    let slot = unsafe { qjs::JS_GetOpaque(val, CLASS_ID.load(Ordering::Relaxed)) } as usize;
    if slot != 0 {
        files::close_dropped(slot as u64 - 1);
    }
}
