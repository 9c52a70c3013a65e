// An independent check of latlab's gpu.launch: an empty kernel on a non-blocking stream,
// launched through the runtime API (<<<>>>) and through the driver API (cuLaunchKernel, as
// latlab launches), timed on the host with steady_clock.
// Prints: "launch runtime_enqueue_ns=A driver_enqueue_ns=B sync_ns=C event_sync_ns=D"
// - *_enqueue: back-to-back launches, the slope between batches of 32 and 64 launches each
//   followed by one synchronisation (as latlab's gpu.launch/enqueue);
// - sync: a runtime launch, then cudaStreamSynchronize (gpu.launch/sync);
// - event_sync: a runtime launch, then an event recorded after it and waited for, spinning
//   (gpu.launch/event-sync).
// Each figure is the median of 21 batches.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda.h>
#include <cuda_runtime.h>

#define CHECK(call)                                                                  \
    do {                                                                             \
        cudaError_t e = (call);                                                      \
        if (e != cudaSuccess) {                                                      \
            fprintf(stderr, "launch: %s: %s\n", #call, cudaGetErrorString(e));       \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)
#define CHECK_DRIVER(call)                                                           \
    do {                                                                             \
        CUresult e = (call);                                                         \
        if (e != CUDA_SUCCESS) {                                                     \
            fprintf(stderr, "launch: %s: error %d\n", #call, (int)e);                \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

__global__ void empty() {}

constexpr int BATCHES = 21;

template <typename F>
double median_ns_per_call(int calls, F&& body) {
    std::vector<double> ns;
    for (int b = 0; b < BATCHES; b++) {
        auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < calls; i++) body();
        auto t1 = std::chrono::steady_clock::now();
        ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / calls);
    }
    std::sort(ns.begin(), ns.end());
    return ns[ns.size() / 2];
}

int main() {
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cudaEvent_t event;
    CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    cudaFunction_t function;
    CHECK(cudaGetFuncBySymbol(&function, (const void*)empty));
    CUfunction driver_function = (CUfunction)function;
    auto runtime_launch = [&] { empty<<<1, 1, 0, stream>>>(); };
    auto driver_launch = [&] {
        CHECK_DRIVER(cuLaunchKernel(driver_function, 1, 1, 1, 1, 1, 1, 0, (CUstream)stream,
                                    nullptr, nullptr));
    };
    // Warm up both paths.
    for (int i = 0; i < 1000; i++) {
        runtime_launch();
        driver_launch();
    }
    CHECK(cudaStreamSynchronize(stream));
    auto slope = [&](auto launch) {
        auto batch = [&](int n) {
            return median_ns_per_call(20, [&] {
                for (int i = 0; i < n; i++) launch();
                CHECK(cudaStreamSynchronize(stream));
            });
        };
        return (batch(64) - batch(32)) / 32;
    };
    double runtime_enqueue = slope(runtime_launch);
    double driver_enqueue = slope(driver_launch);
    double sync = median_ns_per_call(200, [&] {
        runtime_launch();
        CHECK(cudaStreamSynchronize(stream));
    });
    double event_sync = median_ns_per_call(200, [&] {
        runtime_launch();
        CHECK(cudaEventRecord(event, stream));
        CHECK(cudaEventSynchronize(event));
    });
    CHECK(cudaGetLastError());
    printf("launch runtime_enqueue_ns=%.1f driver_enqueue_ns=%.1f sync_ns=%.1f event_sync_ns=%.1f\n",
           runtime_enqueue, driver_enqueue, sync, event_sync);
    return 0;
}
