//! Files shipped with a job (Streaming's `--file`, a job program), as
//! Hadoop's distributed cache: the client puts each once into the block
//! store at a path named by its SHA-256 (`/.mr/files/SHA256/NAME`), and a
//! worker fetches it once into its own cache, checks the hash, and links it
//! into every task's working directory. A file whose bytes do not hash to
//! its name is refused, so a path cannot be made to serve other bytes.

use crate::task::outcome::Failure;
pub use common::shipped::{parse_shipped, sha256_hex};
use rpc::dfs::Dfs;
use std::path::{Path, PathBuf};

/// The shipped file at DFS `path` on this worker's disk (under
/// `data_dir`), fetched through `dfs` and checked on first use.
pub async fn localize(dfs: &Dfs, data_dir: &Path, path: String) -> Result<PathBuf, Failure> {
    let (hash, name) = parse_shipped(&path).map_err(Failure::msg)?;
    let (hash, name) = (hash.to_string(), name.to_string());
    let dir = data_dir.join("files").join(&hash);
    let dest = dir.join(&name);
    if dest.exists() {
        return Ok(dest);
    }
    tokio::fs::create_dir_all(&dir)
        .await
        .map_err(|e| Failure::msg(format!("{}: {e}", dir.display())))?;
    let tmp = dir.join(format!(".{name}.{}.tmp", fastrand::u64(..)));
    let fetched = async {
        // Block by block, as `Dfs::get` does, but over owned blocks: its
        // stream of borrowed reads is not `Send` for every lifetime, which
        // an attempt's spawned future must be.
        let mut f = tokio::fs::File::create(&tmp)
            .await
            .map_err(|e| e.to_string())?;
        let st = dfs.stat(&path).await.map_err(|e| format!("{path}: {e}"))?;
        for b in st.blocks {
            let (data, _) = dfs
                .read_block(&b, false)
                .await
                .map_err(|e| format!("fetching {path}: {e}"))?;
            tokio::io::AsyncWriteExt::write_all(&mut f, &data)
                .await
                .map_err(|e| e.to_string())?;
        }
        tokio::io::AsyncWriteExt::flush(&mut f)
            .await
            .map_err(|e| e.to_string())?;
        let t = tmp.clone();
        let got = tokio::task::spawn_blocking(move || sha256_hex(std::fs::File::open(&t)?))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| e.to_string())?;
        if got != hash {
            return Err(format!(
                "{path}: its bytes hash to {got}, not to its name: refused"
            ));
        }
        set_executable(&tmp).map_err(|e| e.to_string())?;
        std::fs::rename(&tmp, &dest).map_err(|e| e.to_string())
    }
    .await;
    if let Err(e) = fetched {
        let _ = std::fs::remove_file(&tmp);
        return Err(Failure::msg(e));
    }
    tracing::debug!(%path, "shipped file cached");
    Ok(dest)
}

/// Scripts and programs run as they came: every shipped file may be
/// executed, as Hadoop's distributed cache makes them.
fn set_executable(p: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755))
}

/// Links each of `files` (DFS path, local copy) into `workdir` under its
/// name.
pub fn link_into(workdir: &Path, files: &[(String, PathBuf)]) -> Result<(), Failure> {
    for (path, local) in files {
        let (_, name) = parse_shipped(path).map_err(Failure::msg)?;
        let link = workdir.join(name);
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(local, &link)
            .map_err(|e| Failure::msg(format!("{}: {e}", link.display())))?;
    }
    Ok(())
}
