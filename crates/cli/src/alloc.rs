//! The process's memory allocator: mimalloc, for Rust and for tree-sitter's C core.
//!
//! Why: a cold index is allocation-heavy (tree-sitter builds and frees a subtree per
//! node, extraction builds many small strings), and glibc's malloc and free were
//! about 12% of its profile on Django. mimalloc's thread-local free lists make that
//! cheaper on the parsing threads. SQLite keeps its own allocator configuration.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Points tree-sitter's C allocations at mimalloc too. Called first thing in
/// `main`, before any parser exists (tree-sitter requires that: memory allocated by
/// one allocator must not be freed by another).
#[allow(unsafe_code, reason = "tree-sitter's allocator hook is an FFI call")]
pub(crate) fn install_tree_sitter_allocator() {
    use libmimalloc_sys as mi;
    // SAFETY: the four functions are one allocator family, return memory aligned
    // like malloc's, and this runs before any tree-sitter object is created, on the
    // only thread.
    unsafe {
        tree_sitter::set_allocator(Some(tree_sitter::Allocator {
            malloc: mi::mi_malloc,
            calloc: mi::mi_calloc,
            realloc: mi::mi_realloc,
            free: mi::mi_free,
        }));
    }
}
