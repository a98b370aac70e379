//! What the interpreter already provides, told to pip's resolver: for the distributions compiled
//! into CPython, a stub wheel each (its name and version, nothing to install) in a
//! directory pip searches, and a constraints file pinning each to its compiled-in version. A
//! pure-Python package that depends on numpy or pandas then resolves against what the
//! interpreter has (a requirement the compiled-in version does not meet fails in pip, and says
//! which), instead of failing because numpy has no pure wheel; its other pure dependencies come
//! from the package sources as usual. After the download the stubs are dropped, so nothing of
//! them reaches the session.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::InstallRefusal;
use crate::inventory::Distribution;
use crate::workspace::Staging;

/// The directory (under the staging directory) holding the stub wheels.
const STUBS_DIR: &str = "provided";
/// The constraints file pip reads (`-c`), in the staging directory.
const CONSTRAINTS_FILE: &str = "provided-constraints.txt";

/// Where pip finds what the runtime provides.
#[derive(Debug, Clone)]
pub struct Provided {
    /// `--find-links`: the stub wheels.
    pub find_links: PathBuf,
    /// `-c`: one `name==version` per distribution.
    pub constraints: PathBuf,
}

/// Writes the stubs and the constraints for `dists` (name to distribution) into `staging`.
///
/// # Errors
/// A system [`InstallRefusal`] when the staging directory cannot be written.
pub fn write(
    staging: &Staging,
    dists: &BTreeMap<String, Distribution>,
) -> Result<Provided, InstallRefusal> {
    let failed = |e: &dyn std::fmt::Display| {
        InstallRefusal::system("cannot describe the runtime's packages to pip", e)
    };
    let stubs = staging
        .root
        .create_private_dir(STUBS_DIR)
        .map_err(|e| failed(&e))?;
    let mut constraints = String::new();
    for (name, dist) in dists {
        let bytes = stub_wheel(name, &dist.version).map_err(|e| failed(&e))?;
        let mut file = stubs
            .create_new_file(Path::new(&wheel_file_name(name, &dist.version)))
            .map_err(|e| failed(&e))?;
        file.write_all(&bytes).map_err(|e| failed(&e))?;
        constraints.push_str(&format!("{name}=={}\n", dist.version));
    }
    let mut file = staging
        .root
        .create_new_file(Path::new(CONSTRAINTS_FILE))
        .map_err(|e| failed(&e))?;
    file.write_all(constraints.as_bytes())
        .map_err(|e| failed(&e))?;
    Ok(Provided {
        find_links: staging.path.join(STUBS_DIR),
        constraints: staging.path.join(CONSTRAINTS_FILE),
    })
}

/// A distribution's name as wheel file names spell it (PEP 427: runs of `-`, `_`, `.` as `_`).
fn escaped(name: &str) -> String {
    super::normalize(name).replace('-', "_")
}

/// `{name}-{version}-py3-none-any.whl`.
pub fn wheel_file_name(name: &str, version: &str) -> String {
    format!(
        "{}-{}-py3-none-any.whl",
        escaped(name),
        version.replace('-', "_")
    )
}

/// A wheel that declares `name` `version` and holds nothing else: what pip needs to resolve a
/// requirement on it.
fn stub_wheel(name: &str, version: &str) -> zip::result::ZipResult<Vec<u8>> {
    let info = format!("{}-{}.dist-info", escaped(name), version.replace('-', "_"));
    let files = [
        (
            format!("{info}/METADATA"),
            format!("Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"),
        ),
        (
            format!("{info}/WHEEL"),
            "Wheel-Version: 1.0\nGenerator: sandbox-mcp\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
                .to_owned(),
        ),
        (
            format!("{info}/RECORD"),
            format!("{info}/METADATA,,\n{info}/WHEEL,,\n{info}/RECORD,,\n"),
        ),
    ];
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for (path, text) in files {
        zip.start_file(path, options)?;
        zip.write_all(text.as_bytes())?;
    }
    Ok(zip.finish()?.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stub_wheels_are_named_and_declared_as_pip_expects() {
        assert_eq!(
            wheel_file_name("scikit-learn", "1.9.1"),
            "scikit_learn-1.9.1-py3-none-any.whl"
        );
        assert_eq!(
            wheel_file_name("charset.normalizer", "3.5.2"),
            "charset_normalizer-3.5.2-py3-none-any.whl"
        );
        let bytes = stub_wheel("scikit-learn", "1.9.1").unwrap();
        let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
        let mut metadata = String::new();
        std::io::Read::read_to_string(
            &mut archive
                .by_name("scikit_learn-1.9.1.dist-info/METADATA")
                .unwrap(),
            &mut metadata,
        )
        .unwrap();
        assert_eq!(
            metadata,
            "Metadata-Version: 2.1\nName: scikit-learn\nVersion: 1.9.1\n"
        );
        assert_eq!(archive.len(), 3);
    }
}
