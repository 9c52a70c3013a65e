/* Debian 12's Wine (8.0) has no bcryptprimitives.dll, from which Rust's standard library
   (1.78 and later) imports ProcessPrng for its random hash keys: without it a Windows build
   does not start under that Wine ("bcryptprimitives.dll not found", status 53). This DLL,
   put beside the program, gives ProcessPrng through RtlGenRandom (advapi32's
   SystemFunction036), which Wine has. It is for the Wine test of the harness only: real Windows
   (10 and later) has the DLL. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk)) {
            return FALSE;
        }
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
