// An independent check of latlab's gpu.copy: host-to-device copies from page-locked memory
// (cudaMallocHost), each on a stream of its own and waited for, timed twice: on the host
// around the copy and its wait (what latlab reports), and with CUDA events around the copy
// alone. Usage: copy SIZE_BYTES...
// Prints one line per size: "copy bytes=N host_ns=X event_ns=Y" (medians of 21 copies).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(call)                                                                  \
    do {                                                                             \
        cudaError_t e = (call);                                                      \
        if (e != cudaSuccess) {                                                      \
            fprintf(stderr, "copy: %s: %s\n", #call, cudaGetErrorString(e));         \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

constexpr int COPIES = 21;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int main(int argc, char** argv) {
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    for (int a = 1; a < argc; a++) {
        size_t bytes = strtoull(argv[a], nullptr, 10);
        void* host;
        void* device;
        CHECK(cudaMallocHost(&host, bytes));
        CHECK(cudaMalloc(&device, bytes));
        std::fill((char*)host, (char*)host + bytes, 1);
        CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream));
        CHECK(cudaStreamSynchronize(stream));
        std::vector<double> host_ns, event_ns;
        for (int i = 0; i < COPIES; i++) {
            auto t0 = std::chrono::steady_clock::now();
            CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream));
            CHECK(cudaStreamSynchronize(stream));
            auto t1 = std::chrono::steady_clock::now();
            host_ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
            CHECK(cudaEventRecord(start, stream));
            CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream));
            CHECK(cudaEventRecord(stop, stream));
            CHECK(cudaEventSynchronize(stop));
            float ms;
            CHECK(cudaEventElapsedTime(&ms, start, stop));
            event_ns.push_back(ms * 1e6);
        }
        printf("copy bytes=%zu host_ns=%.1f event_ns=%.1f\n", bytes, median(host_ns), median(event_ns));
        fflush(stdout);
        CHECK(cudaFree(device));
        CHECK(cudaFreeHost(host));
    }
    return 0;
}
