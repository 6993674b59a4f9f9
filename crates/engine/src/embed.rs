//! `embeddings: true` for `search` and `localize`: the model of `llm.embeddings`
//! (`llm::Llm::embed`) behind retrieval's [`Embedder`], and a vector cache so
//! a project's definitions are embedded once, not on every query.
//!
//! The cache is one append-only file per provider and model under
//! `.ironbees/embeddings/`: records of (SHA-256 of the text, dimensions, the
//! floats). Appending means a run that is killed or cancelled loses at most the
//! record it was writing; a torn last record is cut off when the file is next
//! opened. Texts are keyed by content, so an edited definition is embedded again
//! and the rest are not. The records nothing asked for in a run (edited or deleted
//! definitions, past requests) are dropped when they make up more than half the
//! file: it is rewritten beside the old one and renamed over it, so a kill leaves
//! one or the other whole. (A second run appending to the old file at that moment
//! loses its records: a cache miss next time, nothing worse.)

use std::{
    collections::{HashMap, HashSet},
    fs::{File, OpenOptions},
    io::{BufReader, Read, Write},
    path::{Path, PathBuf},
    sync::Mutex,
};

use code_graph::Snapshot;
use retrieval::{Embedder, EmbeddingRetriever};
use stdx::Call;

use crate::{
    Session,
    error::{Error, Result},
};

impl Session {
    /// The retriever `embeddings: true` adds: every definition of `snapshot`
    /// embedded (from the cache when it can), reporting progress to the call; and
    /// the weight of its vote in `localize` (`llm.embeddings.weight`).
    pub(crate) fn embedding_retriever<'c>(
        &self,
        snapshot: &Snapshot,
        call: &'c Call<'c>,
    ) -> Result<(EmbeddingRetriever<CachedEmbedder<'c>>, f64)> {
        let settings = self.options.llm.clone().unwrap_or_default().for_embeddings();
        // The generic "no provider" advice names Anthropic, which has no embeddings API.
        if settings.providers.is_empty() {
            return Err(Error::InvalidArgument(
                "--embeddings needs an embedding model and none is configured: set OPENAI_API_KEY \
                 (text-embedding-3-small), or OPENAI_BASE_URL and llm.embeddings.model for a local \
                 OpenAI-compatible server (e.g. nomic-embed-text on Ollama)"
                    .into(),
            ));
        }
        let llm = llm::Llm::new(&settings)?;
        let (provider, model) = llm.embedding_model()?;
        let file = self.layout.embeddings_dir().join(format!(
            "{}.vec",
            &stdx::sha256_hex(format!("{provider}\0{model}").as_bytes())[..16]
        ));
        let cache = VectorCache::open(&file)?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::Unavailable(format!("starting the async runtime: {e}")))?;
        let total = snapshot.project.all_defs().count() as u64;
        call.progress.phase("embedding", Some(total));
        let batch = llm.embedding_batch();
        let weight = llm.embedding_weight()?;
        let embedder = CachedEmbedder {
            llm,
            rt,
            call,
            cache: Mutex::new(cache),
            batch,
            total,
            done: Mutex::new(0),
            failed: std::sync::atomic::AtomicBool::new(false),
        };
        let built = EmbeddingRetriever::build(embedder, snapshot, 256).map_err(|e| match e {
            code_index::Error::Cancelled => Error::Cancelled,
            source => Error::Embedding { model: model.clone(), provider: provider.clone(), source },
        })?;
        Ok((built, weight))
    }
}

/// [`llm::Llm::embed`] as an [`Embedder`], through the cache. Lives for one call:
/// its progress and cancellation are that call's.
pub(crate) struct CachedEmbedder<'c> {
    llm: llm::Llm,
    rt: tokio::runtime::Runtime,
    call: &'c Call<'c>,
    cache: Mutex<VectorCache>,
    batch: usize,
    total: u64,
    done: Mutex<u64>,
    /// An embedding failed or was cancelled: not every definition asked for its
    /// vector, so nothing may be judged stale.
    failed: std::sync::atomic::AtomicBool,
}

impl Drop for CachedEmbedder<'_> {
    fn drop(&mut self) {
        if self.failed.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        // Every definition has asked for its vector: what was not asked for is stale.
        // Failing to drop it costs disk space, not the answer.
        let _ = self.cache.lock().map(|mut c| c.compact());
    }
}

impl Embedder for CachedEmbedder<'_> {
    fn embed(&self, texts: &[&str]) -> code_index::Result<Vec<Vec<f32>>> {
        let r = self.embed_cached(texts);
        if r.is_err() {
            self.failed.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        r
    }
}

impl CachedEmbedder<'_> {
    fn embed_cached(&self, texts: &[&str]) -> code_index::Result<Vec<Vec<f32>>> {
        if self.call.is_cancelled() {
            return Err(code_index::Error::Cancelled);
        }
        let keys: Vec<[u8; 32]> = texts.iter().map(|t| key(t)).collect();
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        let missing: Vec<usize> =
            (0..texts.len()).filter(|&i| cache.get(&keys[i]).is_none()).collect();
        for chunk in missing.chunks(self.batch) {
            let input: Vec<String> = chunk.iter().map(|&i| texts[i].to_owned()).collect();
            let opts = llm::CallOptions { cancel: self.call.cancel.clone(), ..Default::default() };
            let got = self
                .rt
                .block_on(self.llm.embed(&input, &opts))
                .map_err(|e| code_index::Error::External { code: e.code(), source: Box::new(e) })?;
            for (&i, v) in chunk.iter().zip(got.vectors) {
                cache
                    .put(keys[i], v)
                    .map_err(|e| code_index::Error::Io { path: cache.path.clone(), source: e })?;
            }
        }
        // Queries come one at a time after the definitions; progress is for those.
        let mut done = self.done.lock().unwrap_or_else(|p| p.into_inner());
        if *done < self.total {
            *done += texts.len() as u64;
            self.call.progress.advance(texts.len() as u64);
        }
        cache.used.extend(keys.iter().copied());
        Ok(keys.iter().map(|k| cache.get(k).expect("embedded above").to_vec()).collect())
    }
}

fn key(text: &str) -> [u8; 32] {
    stdx::sha256(text.as_bytes())
}

/// Header of every record: key, then the number of floats.
const RECORD_HEAD: usize = 32 + 4;
/// Larger is not a vector any model makes: a damaged length field.
const MAX_DIMS: u32 = 1 << 16;

/// Vectors by text hash, backed by an append-only file.
struct VectorCache {
    path: PathBuf,
    vectors: HashMap<[u8; 32], Vec<f32>>,
    writer: Option<File>,
    /// The keys this run asked for: what [`VectorCache::compact`] keeps.
    used: HashSet<[u8; 32]>,
}

/// Whether a cache of `live` records that are still asked for and `stale` ones
/// that are not is worth rewriting: when the stale ones are the larger part, so
/// a project is rewritten at most once per doubling of its file, not on every
/// run that embeds one new request.
fn worth_compacting(live: usize, stale: usize) -> bool {
    stale > live
}

impl VectorCache {
    /// Reads every whole record; a torn or damaged tail (a killed run) is cut off
    /// so that appends start on a record boundary.
    fn open(path: &Path) -> Result<VectorCache> {
        let io = |e: std::io::Error| {
            Error::Index(code_index::Error::Io { path: path.to_owned(), source: e })
        };
        let mut vectors = HashMap::new();
        let mut good: u64 = 0;
        let len = match File::open(path) {
            Ok(f) => {
                let len = f.metadata().map_err(io)?.len();
                let mut r = BufReader::new(f);
                let mut head = [0u8; RECORD_HEAD];
                while r.read_exact(&mut head).is_ok() {
                    let dims = u32::from_le_bytes(head[32..].try_into().expect("4 bytes"));
                    if dims == 0 || dims > MAX_DIMS {
                        break;
                    }
                    let mut floats = vec![0u8; dims as usize * 4];
                    if r.read_exact(&mut floats).is_err() {
                        break;
                    }
                    let v: Vec<f32> = floats
                        .chunks_exact(4)
                        .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
                        .collect();
                    vectors.insert(head[..32].try_into().expect("32 bytes"), v);
                    good += (RECORD_HEAD + floats.len()) as u64;
                }
                len
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
            Err(e) => return Err(io(e)),
        };
        if good < len {
            OpenOptions::new().write(true).open(path).and_then(|f| f.set_len(good)).map_err(io)?;
        }
        Ok(VectorCache { path: path.to_owned(), vectors, writer: None, used: HashSet::new() })
    }

    fn get(&self, key: &[u8; 32]) -> Option<&[f32]> {
        self.vectors.get(key).map(Vec::as_slice)
    }

    /// Drops the records this run did not ask for, if [`worth_compacting`]:
    /// writes the rest to a new file and renames it over the old one.
    fn compact(&mut self) -> Result<()> {
        let live = self.vectors.keys().filter(|k| self.used.contains(*k)).count();
        if !worth_compacting(live, self.vectors.len() - live) {
            return Ok(());
        }
        let tmp = self.path.with_extension("vec.tmp");
        let written = (|| {
            let mut f = File::create(&tmp)?;
            let mut buf = Vec::new();
            for (k, v) in self.vectors.iter().filter(|(k, _)| self.used.contains(*k)) {
                buf.extend_from_slice(&record(k, v));
            }
            f.write_all(&buf)?;
            f.sync_all()?;
            std::fs::rename(&tmp, &self.path)
        })();
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(Error::Index(code_index::Error::Io { path: self.path.clone(), source: e }));
        }
        // Appends go to the new file from now on.
        self.writer = None;
        let used = &self.used;
        self.vectors.retain(|k, _| used.contains(k));
        Ok(())
    }

    fn put(&mut self, key: [u8; 32], v: Vec<f32>) -> std::io::Result<()> {
        if self.writer.is_none() {
            std::fs::create_dir_all(self.path.parent().expect("a file in a directory"))?;
            self.writer = Some(OpenOptions::new().create(true).append(true).open(&self.path)?);
        }
        let w = self.writer.as_mut().expect("opened above");
        // One unbuffered append per record: a kill tears at most this one, and two
        // runs appending at once (O_APPEND) do not interleave inside a record.
        w.write_all(&record(&key, &v))?;
        self.vectors.insert(key, v);
        Ok(())
    }
}

/// One record as the file holds it: key, number of floats, the floats.
fn record(key: &[u8; 32], v: &[f32]) -> Vec<u8> {
    let mut rec = Vec::with_capacity(RECORD_HEAD + v.len() * 4);
    rec.extend_from_slice(key);
    rec.extend_from_slice(&(v.len() as u32).to_le_bytes());
    for x in v {
        rec.extend_from_slice(&x.to_le_bytes());
    }
    rec
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_survives_a_torn_record_and_keeps_appending() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/m.vec");
        {
            let mut c = VectorCache::open(&path).unwrap();
            c.put(key("a"), vec![1.0, 2.0]).unwrap();
            c.put(key("b"), vec![3.0, 4.0]).unwrap();
        }
        // A run killed while writing a third record.
        let mut bytes = std::fs::read(&path).unwrap();
        let whole = bytes.len();
        bytes.extend_from_slice(&key("c"));
        bytes.extend_from_slice(&2u32.to_le_bytes());
        bytes.extend_from_slice(&5.0f32.to_le_bytes());
        std::fs::write(&path, &bytes).unwrap();

        let mut c = VectorCache::open(&path).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len() as usize, whole, "torn tail cut off");
        assert_eq!(c.get(&key("a")), Some(&[1.0, 2.0][..]));
        assert_eq!(c.get(&key("c")), None);
        c.put(key("c"), vec![5.0, 6.0]).unwrap();
        drop(c);
        let c = VectorCache::open(&path).unwrap();
        assert_eq!(c.get(&key("b")), Some(&[3.0, 4.0][..]));
        assert_eq!(c.get(&key("c")), Some(&[5.0, 6.0][..]));
    }

    #[test]
    fn records_no_run_asks_for_are_dropped_once_they_are_most_of_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.vec");
        let size = || std::fs::metadata(&path).unwrap().len() as usize;
        let one = RECORD_HEAD + 2 * 4;
        {
            let mut c = VectorCache::open(&path).unwrap();
            for k in ["a", "b", "c"] {
                c.put(key(k), vec![1.0, 2.0]).unwrap();
            }
        }
        // A run asks for two of three: one stale record is not worth a rewrite.
        let mut c = VectorCache::open(&path).unwrap();
        c.used.extend([key("a"), key("b")]);
        c.compact().unwrap();
        assert_eq!(size(), 3 * one);
        drop(c);
        // A run asks for one and embeds one more: two of four are live, two stale.
        let mut c = VectorCache::open(&path).unwrap();
        c.put(key("d"), vec![3.0, 4.0]).unwrap();
        c.used.extend([key("a"), key("d")]);
        c.compact().unwrap();
        assert_eq!(size(), 4 * one, "half stale is not yet more than half");
        drop(c);
        // One of four asked for: the file is rewritten with it alone, and keeps
        // taking appends.
        let mut c = VectorCache::open(&path).unwrap();
        c.used.insert(key("d"));
        c.compact().unwrap();
        assert_eq!(size(), one);
        assert_eq!(c.get(&key("a")), None);
        c.put(key("e"), vec![5.0, 6.0]).unwrap();
        drop(c);
        let c = VectorCache::open(&path).unwrap();
        assert_eq!(c.get(&key("d")), Some(&[3.0, 4.0][..]));
        assert_eq!(c.get(&key("e")), Some(&[5.0, 6.0][..]));
        assert_eq!(c.vectors.len(), 2);
        assert!(!path.with_extension("vec.tmp").exists());
    }

    #[test]
    fn a_damaged_length_ends_the_readable_part() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.vec");
        let mut bytes = key("a").to_vec();
        bytes.extend_from_slice(&u32::MAX.to_le_bytes());
        bytes.extend_from_slice(&[0u8; 64]);
        std::fs::write(&path, &bytes).unwrap();
        let c = VectorCache::open(&path).unwrap();
        assert!(c.vectors.is_empty());
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
    }
}
