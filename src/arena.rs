//! Tokenizer tables built in an arena of their own. Building the o200k tables (the `tiktoken`
//! crate's or tiktoken-rs's) makes about 400,000 allocations, nearly all of them small (one per
//! token of the vocabulary) and many freed again by the end of the build, and under glibc's malloc
//! that bookkeeping is nearly half of the build (o200k 64–72 ms, 36–40 ms in the arena:
//! docs/performance.md, "The tables' arena"). [`Allocator`] is a global allocator that is the
//! system's everywhere except on a thread inside [`building`]: there, an allocation under 16 KB is
//! bumped from one reserved region of address space (64 MB, `MAP_NORESERVE`: memory only once
//! touched), and a larger one goes to the system allocator, which reuses the memory of the
//! build's large temporaries once they are freed (bumping them too touched twice the pages, and
//! page faults cost more than malloc saved).
//! Each thread takes the region 1 MB at a time and bumps within its chunk without atomics (see
//! `Region`). A freed block that ends at its thread's cursor gives its space back to the next
//! allocation; any other stays unused until the process ends (about 4 MB of the 5 MB o200k bumps,
//! measured in a throwaway copy of this allocator; the tables themselves live as long as the
//! process). Peak RSS still falls: `ctxbudget count --tokenizer o200k` of a 6-byte file, 43 MB → 30
//! MB (`/usr/bin/time`). When the region is full, or outside [`building`], the system allocator
//! serves; a block is given back to whichever allocator it came from, on any thread, and a block of
//! the region that cannot grow in place moves.
//!
//! The library never installs it: the `ctxbudget` binary and the speed harness do
//! (`#[global_allocator]`); without it, [`building`] only runs its closure. Linux only (elsewhere
//! no region is reserved and the system allocator serves everything).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Once;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Address space reserved for the tables' small allocations: o200k bumps about 5 MB while it is
/// built, cl100k about half of that.
const REGION_BYTES: usize = 64 << 20;

/// Allocations of this size or more are the system allocator's, even inside [`building`].
const SMALL_BYTES: usize = 16 << 10;

/// What a thread takes from the region at a time, to bump from without atomics.
const CHUNK_BYTES: usize = 1 << 20;

thread_local! {
    /// Whether this thread is inside [`building`].
    static BUILDING: Cell<bool> = const { Cell::new(false) };
    /// This thread's chunk: the start of the region it was taken from, its first free byte and
    /// its end.
    static CHUNK: Cell<(usize, usize, usize)> = const { Cell::new((0, 0, 0)) };
}

/// The region every [`building`] thread bumps from; empty until the first [`building`].
static REGION: Region = Region::empty();

static RESERVE: Once = Once::new();

/// A global allocator that serves [`building`] threads from an arena and everything else from
/// the system allocator (see the module's documentation). Install it in a binary with
/// `#[global_allocator] static ALLOCATOR: ctxbudget::arena::Allocator = ctxbudget::arena::Allocator;`.
pub struct Allocator;

/// Runs `f` with this thread's allocations served from the arena, when [`Allocator`] is the
/// global allocator (otherwise it only runs `f`). For building tables that are kept until the
/// process ends: what `f` frees is mostly not reused.
pub fn building<T>(f: impl FnOnce() -> T) -> T {
    RESERVE.call_once(|| {
        if let Some(start) = sys::reserve(REGION_BYTES) {
            REGION.init(start, REGION_BYTES);
        }
    });
    /// Puts the thread's previous state back, also when `f` unwinds.
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            BUILDING.with(|b| b.set(self.0));
        }
    }
    let _restore = Restore(BUILDING.with(|b| b.replace(true)));
    f()
}

/// Bytes of the arena handed out to threads so far, in whole chunks of 1 MB: 0 when nothing was
/// built in it, or when [`Allocator`] is not the global allocator.
pub fn in_use() -> usize {
    REGION.in_use()
}

/// Whether this thread is inside [`building`]. `try_with`: the flag has no destructor, but an
/// allocation during a thread's teardown must not panic.
fn building_here() -> bool {
    BUILDING.try_with(Cell::get).unwrap_or(false)
}

// SAFETY: see `Region`'s methods, which this delegates to with this thread's state.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        unsafe { REGION.alloc(layout, building_here()) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        unsafe { REGION.alloc_zeroed(layout, building_here()) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { REGION.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        unsafe { REGION.realloc(ptr, layout, new_size, building_here()) }
    }
}

/// A range of reserved address space handed out in chunks, which each thread bumps from on its
/// own. The region's bump pointer moves by compare-and-swap (acquire and release), once per chunk,
/// so chunks never overlap; within its chunk a thread bumps with plain arithmetic on a
/// thread-local cursor (an atomic per allocation made the locked instruction wait for the
/// thread's earlier stores to drain: a twelfth of a replay). A freed block that ends at its
/// thread's cursor moves the cursor back (only the thread that took the chunk can find it there);
/// any other stays unused. The last bytes of a chunk too short for an allocation are left.
struct Region {
    start: AtomicUsize,
    end: AtomicUsize,
    next: AtomicUsize,
    chunk: AtomicUsize,
}

impl Region {
    /// No region: every allocation is the system's until [`Region::init`].
    const fn empty() -> Region {
        Region {
            start: AtomicUsize::new(0),
            end: AtomicUsize::new(0),
            next: AtomicUsize::new(0),
            chunk: AtomicUsize::new(CHUNK_BYTES),
        }
    }

    /// Makes `[start, start + len)` the region, once, before any block is handed out.
    fn init(&self, start: usize, len: usize) {
        self.next.store(start, Ordering::Relaxed);
        self.end.store(start + len, Ordering::Relaxed);
        self.start.store(start, Ordering::Release);
    }

    fn contains(&self, ptr: *mut u8) -> bool {
        let p = ptr as usize;
        let start = self.start.load(Ordering::Acquire);
        start != 0 && p >= start && p < self.end.load(Ordering::Relaxed)
    }

    /// Bytes of the region handed out as chunks.
    fn in_use(&self) -> usize {
        let start = self.start.load(Ordering::Acquire);
        if start == 0 { 0 } else { self.next.load(Ordering::Acquire) - start }
    }

    /// This thread's cursor and chunk end in this region (an empty chunk when its chunk is another
    /// region's).
    fn cursor(&self) -> (usize, usize) {
        let (region, next, end) = CHUNK.try_with(Cell::get).unwrap_or_default();
        if region != 0 && region == self.start.load(Ordering::Relaxed) { (next, end) } else { (0, 0) }
    }

    fn set_cursor(&self, next: usize, end: usize) {
        let _ = CHUNK.try_with(|c| c.set((self.start.load(Ordering::Relaxed), next, end)));
    }

    /// A new chunk for this thread, of at least `at_least` bytes, or `None` when the region is
    /// empty or full.
    fn take_chunk(&self, at_least: usize) -> Option<(usize, usize)> {
        if self.start.load(Ordering::Acquire) == 0 {
            return None;
        }
        let end = self.end.load(Ordering::Relaxed);
        let len = self.chunk.load(Ordering::Relaxed).max(at_least);
        let mut taken = 0;
        self.next
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |next| {
                taken = next;
                let after = next.checked_add(len)?;
                (after <= end).then_some(after)
            })
            .ok()?;
        Some((taken, taken + len))
    }

    /// [`GlobalAlloc::alloc`], from the region when `building` and the block is small.
    ///
    /// # Safety
    /// As [`GlobalAlloc::alloc`]: `layout` has a non-zero size.
    unsafe fn alloc(&self, layout: Layout, building: bool) -> *mut u8 {
        match if building { self.bump(layout) } else { None } {
            Some(p) => p,
            // SAFETY: the caller's contract, passed on.
            None => unsafe { System.alloc(layout) },
        }
    }

    /// [`GlobalAlloc::alloc_zeroed`], as [`Region::alloc`].
    ///
    /// # Safety
    /// As [`GlobalAlloc::alloc_zeroed`].
    unsafe fn alloc_zeroed(&self, layout: Layout, building: bool) -> *mut u8 {
        match if building { self.bump(layout) } else { None } {
            // SAFETY: `p` is a fresh block of `layout.size()` bytes; the region's memory may hold
            // what a freed block left, so it is zeroed here.
            Some(p) => unsafe {
                p.write_bytes(0, layout.size());
                p
            },
            // SAFETY: the caller's contract, passed on.
            None => unsafe { System.alloc_zeroed(layout) },
        }
    }

    /// [`GlobalAlloc::dealloc`]: a block of the region is given back to it, any other to the
    /// system allocator.
    ///
    /// # Safety
    /// As [`GlobalAlloc::dealloc`]: `ptr` is a live block of this allocator, of `layout`.
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if !self.free(ptr, layout) {
            // SAFETY: not the region's, so the system allocator's, with this layout.
            unsafe { System.dealloc(ptr, layout) }
        }
    }

    /// [`GlobalAlloc::realloc`]: a system block stays the system's; a block of the region is
    /// resized in place when it can be, and otherwise moves (to the region when `building`).
    ///
    /// # Safety
    /// As [`GlobalAlloc::realloc`].
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize, building: bool) -> *mut u8 {
        if !self.contains(ptr) {
            // SAFETY: the system allocator's block, with the caller's contract.
            return unsafe { System.realloc(ptr, layout, new_size) };
        }
        if self.resize(ptr, layout, new_size) {
            return ptr;
        }
        // SAFETY: `GlobalAlloc::realloc`'s contract makes this layout valid.
        let moved = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: `new_size` is not zero (the caller's contract).
        let to = unsafe { self.alloc(moved, building) };
        if !to.is_null() {
            // SAFETY: both blocks are live and disjoint, each at least this long.
            unsafe { std::ptr::copy_nonoverlapping(ptr, to, layout.size().min(new_size)) };
            self.free(ptr, layout);
        }
        to
    }

    /// A block for `layout` from this thread's chunk (taking a new chunk when it is used up), or
    /// `None` when it is not small, or the region is empty or full.
    fn bump(&self, layout: Layout) -> Option<*mut u8> {
        if layout.size() >= SMALL_BYTES {
            return None;
        }
        let fit = |(next, end): (usize, usize)| {
            let at = next.checked_next_multiple_of(layout.align())?;
            let after = at.checked_add(layout.size())?;
            (after <= end).then_some((at, after, end))
        };
        let (at, after, end) = match fit(self.cursor()) {
            Some(fitted) => fitted,
            None => fit(self.take_chunk(layout.size() + layout.align())?)?,
        };
        self.set_cursor(after, end);
        Some(at as *mut u8)
    }

    /// Gives back a block (false: not the region's). Only a block that ends at this thread's
    /// cursor is reused.
    fn free(&self, ptr: *mut u8, layout: Layout) -> bool {
        if !self.contains(ptr) {
            return false;
        }
        let (next, end) = self.cursor();
        if ptr as usize + layout.size() == next {
            self.set_cursor(ptr as usize, end);
        }
        true
    }

    /// Resizes a block of the region in place: a shrink always (the rest is lost, or given back
    /// when the block ends at this thread's cursor), a growth when the block ends at the cursor,
    /// stays small, and fits in the chunk.
    fn resize(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> bool {
        let (p, old) = (ptr as usize, layout.size());
        let (next, end) = self.cursor();
        if p + old == next && new_size < SMALL_BYTES.max(old) && p + new_size <= end {
            self.set_cursor(p + new_size, end);
            return true;
        }
        new_size <= old
    }
}

#[cfg(target_os = "linux")]
mod sys {
    /// Reserves `len` bytes of address space, readable and writable, with no memory behind it
    /// until touched; its start, or `None` when the system refuses.
    pub fn reserve(len: usize) -> Option<usize> {
        // SAFETY: `mmap` with a null hint creates a new private anonymous mapping and touches no
        // existing memory.
        let start = unsafe {
            let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE;
            libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, flags, -1, 0)
        };
        (start != libc::MAP_FAILED).then_some(start as usize)
    }
}

#[cfg(not(target_os = "linux"))]
mod sys {
    pub fn reserve(_len: usize) -> Option<usize> {
        None
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A region of its own over `len` bytes of fresh address space (never unmapped: a test's),
    /// handed out in chunks of 4 KB, so that threads take many.
    fn region(len: usize) -> Region {
        let region = Region::empty();
        region.init(sys::reserve(len).expect("address space"), len);
        region.chunk.store(4 << 10, Ordering::Relaxed);
        region
    }

    fn layout(size: usize, align: usize) -> Layout {
        Layout::from_size_align(size, align).unwrap()
    }

    #[test]
    fn small_blocks_of_a_build_are_bumped_and_the_rest_is_the_systems() {
        let r = region(64 << 10);
        // SAFETY (every block below): non-zero sizes; each block is given back once, with its layout.
        unsafe {
            let a = r.alloc(layout(10, 1), true);
            let b = r.alloc(layout(24, 16), true);
            assert!(r.contains(a) && r.contains(b));
            assert_eq!(b as usize % 16, 0);
            assert!(b as usize >= a as usize + 10, "disjoint");
            let outside = r.alloc(layout(24, 16), false);
            let large = r.alloc(layout(SMALL_BYTES, 8), true);
            assert!(!r.contains(outside) && !r.contains(large), "not building, or not small");
            // The last block's space is reused; another's is not.
            r.dealloc(b, layout(24, 16));
            let again = r.alloc(layout(24, 16), true);
            assert_eq!(again, b);
            r.dealloc(a, layout(10, 1));
            let after = r.alloc(layout(10, 1), true);
            assert!(after as usize > b as usize);
            // A full region leaves the rest to the system.
            let mut last = after;
            while r.contains(last) {
                last = r.alloc(layout(8 << 10, 8), true);
            }
            assert!(r.in_use() <= 64 << 10);
            r.dealloc(last, layout(8 << 10, 8));
            r.dealloc(outside, layout(24, 16));
            r.dealloc(large, layout(SMALL_BYTES, 8));
        }
    }

    #[test]
    fn only_the_last_block_grows_in_place_and_only_while_small() {
        let r = region(64 << 10);
        // SAFETY: as above.
        unsafe {
            let a = r.alloc(layout(100, 8), true);
            a.write_bytes(7, 100);
            let grown = r.realloc(a, layout(100, 8), 1000, true);
            assert_eq!(grown, a, "the last block grows where it is");
            let b = r.alloc(layout(8, 8), true);
            let moved = r.realloc(a, layout(1000, 8), 2000, true);
            assert_ne!(moved, a, "a block with another after it moves");
            assert!(r.contains(moved));
            assert_eq!(std::slice::from_raw_parts(moved, 100), &[7; 100][..]);
            let shrunk = r.realloc(b, layout(8, 8), 4, true);
            assert_eq!(shrunk, b, "a shrink stays");
            let out = r.realloc(moved, layout(2000, 8), SMALL_BYTES, true);
            assert!(!r.contains(out), "a block that stops being small goes to the system");
            assert_eq!(std::slice::from_raw_parts(out, 100), &[7; 100][..]);
            r.dealloc(out, layout(SMALL_BYTES, 8));
            r.dealloc(shrunk, layout(4, 8));
        }
    }

    #[test]
    fn building_marks_the_thread_and_restores_it_even_on_a_panic() {
        assert!(!building_here());
        building(|| {
            assert!(building_here());
            building(|| assert!(building_here()));
            assert!(building_here(), "a nested build leaves the outer one marked");
        });
        assert!(!building_here());
        let unwound = std::panic::catch_unwind(|| building(|| panic!("a build that fails")));
        assert!(unwound.is_err());
        assert!(!building_here());
        std::thread::spawn(|| assert!(!building_here(), "another thread is not marked")).join().unwrap();
    }

    #[test]
    fn threads_bumping_freeing_and_growing_at_once_never_share_a_byte() {
        // Room for every allocation, in chunks of 512 bytes, so the threads take chunks all along.
        let r = region(64 << 20);
        r.chunk.store(512, Ordering::Relaxed);
        std::thread::scope(|scope| {
            for tag in 1..=4u8 {
                let r = &r;
                scope.spawn(move || {
                    let mut live: Vec<(*mut u8, Layout)> = Vec::new();
                    for n in 0..20_000usize {
                        let size = 1 + (n * 7 + tag as usize * 13) % 300;
                        // SAFETY: blocks are live with their layouts, non-zero sizes, freed once.
                        unsafe {
                            match n % 5 {
                                0..=2 => {
                                    let l = layout(size, 8);
                                    let p = r.alloc(l, true);
                                    p.write_bytes(tag, size);
                                    live.push((p, l));
                                }
                                3 if !live.is_empty() => {
                                    let (p, l) = live.pop().unwrap();
                                    assert!(holds(p, l.size(), tag), "another thread wrote into this block");
                                    let q = r.realloc(p, l, l.size() + size, true);
                                    q.write_bytes(tag, l.size() + size);
                                    live.push((q, layout(l.size() + size, 8)));
                                }
                                _ => {
                                    if let Some((p, l)) = live.pop() {
                                        assert!(
                                            holds(p, l.size(), tag),
                                            "another thread wrote into this block"
                                        );
                                        r.dealloc(p, l);
                                    }
                                }
                            }
                        }
                        if live.len() > 200 {
                            for (p, l) in live.drain(..) {
                                // SAFETY: as above.
                                unsafe {
                                    assert!(holds(p, l.size(), tag));
                                    r.dealloc(p, l);
                                }
                            }
                        }
                    }
                    for (p, l) in live {
                        // SAFETY: as above.
                        unsafe {
                            assert!(holds(p, l.size(), tag));
                            r.dealloc(p, l);
                        }
                    }
                });
            }
        });
    }

    #[derive(Debug, Clone)]
    enum Op {
        Alloc { size: usize, align: usize, zeroed: bool, building: bool },
        Realloc { which: usize, size: usize, building: bool },
        Free { which: usize },
    }

    fn op() -> impl Strategy<Value = Op> {
        let size = prop_oneof![1usize..64, 64usize..4096, 4096usize..(SMALL_BYTES + 4096)];
        prop_oneof![
            (size.clone(), 0u32..7, any::<bool>(), any::<bool>()).prop_map(|(size, a, zeroed, building)| {
                Op::Alloc { size, align: 1 << a, zeroed, building }
            }),
            (any::<usize>(), size, any::<bool>()).prop_map(|(which, size, building)| Op::Realloc {
                which,
                size,
                building
            }),
            any::<usize>().prop_map(|which| Op::Free { which }),
        ]
    }

    /// Whether the block holds `tag` in each of its bytes.
    ///
    /// # Safety
    /// `p` is a live block of at least `len` bytes.
    unsafe fn holds(p: *mut u8, len: usize, tag: u8) -> bool {
        unsafe { std::slice::from_raw_parts(p, len) }.iter().all(|&b| b == tag)
    }

    proptest! {
        /// Any sequence of allocations, resizes and frees, building or not, in a region small
        /// enough to fill up: every block is aligned, disjoint from every live block, zeroed when
        /// asked, and keeps its bytes through resizes and other blocks' lives.
        #[test]
        fn blocks_keep_their_bytes_whatever_the_sequence(ops in prop::collection::vec(op(), 1..120)) {
            let r = region(96 << 10);
            let mut live: Vec<(*mut u8, Layout, u8)> = Vec::new();
            for (n, op) in ops.into_iter().enumerate() {
                let tag = (n % 251) as u8 + 1;
                // SAFETY: every block in `live` is live with its layout; sizes are non-zero.
                unsafe {
                    match op {
                        Op::Alloc { size, align, zeroed, building } => {
                            let l = layout(size, align);
                            let p = if zeroed { r.alloc_zeroed(l, building) } else { r.alloc(l, building) };
                            prop_assert!(!p.is_null());
                            prop_assert_eq!(p as usize % align, 0);
                            prop_assert!(!zeroed || holds(p, size, 0));
                            let (s, e) = (p as usize, p as usize + size);
                            for (q, ql, _) in &live {
                                prop_assert!(e <= *q as usize || s >= *q as usize + ql.size(), "overlap");
                            }
                            p.write_bytes(tag, size);
                            live.push((p, l, tag));
                        }
                        Op::Realloc { which, size, building } if !live.is_empty() => {
                            let i = which % live.len();
                            let (p, l, old) = live[i];
                            prop_assert!(holds(p, l.size(), old));
                            let q = r.realloc(p, l, size, building);
                            prop_assert!(holds(q, l.size().min(size), old));
                            let (s, e) = (q as usize, q as usize + size);
                            for (j, (o, ol, _)) in live.iter().enumerate() {
                                prop_assert!(j == i || e <= *o as usize || s >= *o as usize + ol.size(), "overlap");
                            }
                            q.write_bytes(tag, size);
                            live[i] = (q, layout(size, l.align()), tag);
                        }
                        Op::Free { which } if !live.is_empty() => {
                            let (p, l, t) = live.swap_remove(which % live.len());
                            prop_assert!(holds(p, l.size(), t));
                            r.dealloc(p, l);
                        }
                        _ => {}
                    }
                }
            }
            for (p, l, t) in live {
                // SAFETY: as above.
                unsafe {
                    prop_assert!(holds(p, l.size(), t));
                    r.dealloc(p, l);
                }
            }
        }
    }
}
