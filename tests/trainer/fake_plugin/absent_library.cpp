// libringside-test-absent.so.1: a library the FAKE_MISSING_LIBRARY plugin needs, built into a
// folder that is on no search path, so that loading the plugin fails as a missing CUDA library
// would.
extern "C" __attribute__((visibility("default"))) int ringsideTestAbsentFunction() { return 0; }
