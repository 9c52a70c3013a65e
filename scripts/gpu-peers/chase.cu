// An independent check of latlab's gpu.memory: one GPU thread's dependent loads over a
// random ring of 128-byte lines, written with the CUDA runtime as a user would, timed on
// the device (%globaltimer). Usage: chase SIZE_BYTES...
// Prints one line per size: "chase bytes=N ca_ns=X cg_ns=Y" (the median nanoseconds per
// load of 11 launches, each of 4,096 loads continuing where the last stopped, through L1
// and bypassing it), after "device name=... l2_bytes=L".
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(call)                                                                  \
    do {                                                                             \
        cudaError_t e = (call);                                                      \
        if (e != cudaSuccess) {                                                      \
            fprintf(stderr, "chase: %s: %s\n", #call, cudaGetErrorString(e));        \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

constexpr size_t LINE = 128;
constexpr long TIMED = 4096;
constexpr int LAUNCHES = 11;

__device__ unsigned long long global_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

template <bool THROUGH_L1>
__device__ unsigned long long load(unsigned long long p) {
    const unsigned long long* at = reinterpret_cast<const unsigned long long*>(p);
    return THROUGH_L1 ? __ldca(at) : __ldcg(at);
}

// out[0]: nanoseconds of the timed loads; out[1]: where the walk stopped.
template <bool THROUGH_L1>
__global__ void walk(unsigned long long start, long warm, long timed, unsigned long long* out) {
    unsigned long long p = start;
    for (long i = 0; i < warm; i++) p = load<THROUGH_L1>(p);
    unsigned long long t0 = global_ns();
    for (long i = 0; i < timed; i++) p = load<THROUGH_L1>(p);
    unsigned long long t1 = global_ns();
    out[0] = t1 - t0;
    out[1] = p;
}

template <bool THROUGH_L1>
double median_ns(unsigned long long ring, size_t lines, size_t l2_lines, unsigned long long* out) {
    // The untimed lap latlab takes: the whole ring, but no more than the L2 holds beyond
    // twice its size.
    long warm = lines > 2 * l2_lines ? (long)l2_lines : (long)lines;
    unsigned long long host[2];
    walk<THROUGH_L1><<<1, 1>>>(ring, warm, 0, out);
    CHECK(cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost));
    unsigned long long position = host[1];
    std::vector<double> ns;
    for (int i = 0; i < LAUNCHES; i++) {
        walk<THROUGH_L1><<<1, 1>>>(position, 0, TIMED, out);
        CHECK(cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost));
        ns.push_back((double)host[0] / TIMED);
        position = host[1];
    }
    std::sort(ns.begin(), ns.end());
    return ns[ns.size() / 2];
}

int main(int argc, char** argv) {
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("device name=\"%s\" l2_bytes=%d\n", prop.name, prop.l2CacheSize);
    size_t l2_lines = (size_t)prop.l2CacheSize / LINE;
    unsigned long long* out;
    CHECK(cudaMalloc(&out, 2 * sizeof(unsigned long long)));
    std::mt19937_64 random(42);
    for (int a = 1; a < argc; a++) {
        size_t bytes = strtoull(argv[a], nullptr, 10) / LINE * LINE;
        size_t lines = bytes / LINE;
        if (lines < 2) continue;
        char* ring;
        CHECK(cudaMalloc(&ring, bytes));
        // A single random cycle through every line (Sattolo's algorithm).
        std::vector<size_t> next(lines);
        for (size_t i = 0; i < lines; i++) next[i] = i;
        for (size_t i = lines - 1; i > 0; i--) {
            size_t j = std::uniform_int_distribution<size_t>(0, i - 1)(random);
            std::swap(next[i], next[j]);
        }
        std::vector<unsigned long long> words(bytes / 8, 0);
        unsigned long long base = (unsigned long long)ring;
        for (size_t i = 0; i < lines; i++) words[i * LINE / 8] = base + next[i] * LINE;
        // On the legacy default stream, as the kernels: they run after the copy lands.
        CHECK(cudaMemcpy(ring, words.data(), bytes, cudaMemcpyHostToDevice));
        double ca = median_ns<true>(base, lines, l2_lines, out);
        double cg = median_ns<false>(base, lines, l2_lines, out);
        CHECK(cudaDeviceSynchronize());
        printf("chase bytes=%zu ca_ns=%.3f cg_ns=%.3f\n", bytes, ca, cg);
        fflush(stdout);
        CHECK(cudaFree(ring));
    }
    CHECK(cudaFree(out));
    return 0;
}
