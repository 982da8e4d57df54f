// The one function is inline, in the header; SwiftPM needs a source file for a C target.
#include "CPrefetch.h"
