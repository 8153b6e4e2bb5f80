// Clang thread-safety annotations (the macros of leveldb's port/thread_annotations.h and of
// clang's documentation, https://clang.llvm.org/docs/ThreadSafetyAnalysis.html). With clang and
// -Wthread-safety (the `thread-safety` CMake preset, built in CI with -Werror) the compiler checks
// that every member marked GUARDED_BY(m) is touched only with m held and that every function
// marked REQUIRES(m) is called with m held. With other compilers the macros expand to nothing.
#pragma once

#if defined(__clang__)
#define RINGSIDE_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define RINGSIDE_THREAD_ANNOTATION(x)
#endif

// A class that is a lock ("mutex").
#define CAPABILITY(x) RINGSIDE_THREAD_ANNOTATION(capability(x))
// An RAII class that holds a lock for its lifetime.
#define SCOPED_CAPABILITY RINGSIDE_THREAD_ANNOTATION(scoped_lockable)
// A data member that may be read or written only with the lock held.
#define GUARDED_BY(x) RINGSIDE_THREAD_ANNOTATION(guarded_by(x))
// A pointer member whose pointee may be touched only with the lock held.
#define PT_GUARDED_BY(x) RINGSIDE_THREAD_ANNOTATION(pt_guarded_by(x))
// The caller must hold the lock(s) (exclusively).
#define REQUIRES(...) RINGSIDE_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
// The caller must not hold the lock(s) (the function takes them).
#define EXCLUDES(...) RINGSIDE_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
// The function takes / releases the lock(s).
#define ACQUIRE(...) RINGSIDE_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) RINGSIDE_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) RINGSIDE_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) RINGSIDE_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
// The caller must hold the lock(s) at least shared.
#define REQUIRES_SHARED(...) RINGSIDE_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) RINGSIDE_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
// The function checks at run time that the lock is held (tells the analysis it is).
#define ASSERT_CAPABILITY(x) RINGSIDE_THREAD_ANNOTATION(assert_capability(x))
// The function returns a reference to the lock.
#define RETURN_CAPABILITY(x) RINGSIDE_THREAD_ANNOTATION(lock_returned(x))
// Turns the analysis off for one function (say why next to it).
#define NO_THREAD_SAFETY_ANALYSIS RINGSIDE_THREAD_ANNOTATION(no_thread_safety_analysis)
