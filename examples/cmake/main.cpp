// main.cpp - the CMake example: the kernels of two spec files (lora.yaml
// and rows.yaml) in one C++ program. Runs each on the default OpenCL
// device over small random inputs, checks every output against a plain
// loop on the CPU, prints OK and exits 0; prints what differs and exits 1
// otherwise.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "demo_lora.h"
#include "demo_rmsnorm.h"
#include "demo_softmax.h"

namespace
{

// Not a multiple of any tile: the kernels' edges are checked too.
constexpr size_t kRows = 19;
// Largest difference from the CPU, relative to the output's magnitude.
constexpr double kTolerance = 1e-4;

using Matrix = std::vector<float>;
using Reference = std::vector<double>;

void check(cl_int err, const std::string &what)
{
    if (err != CL_SUCCESS) {
        throw std::runtime_error(what + " failed (" + std::to_string(err) +
                                 ")");
    }
}

template <typename T, cl_int (*Release)(T)> struct Releaser {
    void operator()(T object) const
    {
        Release(object);
    }
};
template <typename T, cl_int (*Release)(T)>
using Handle = std::unique_ptr<std::remove_pointer_t<T>, Releaser<T, Release>>;
using Buffer = Handle<cl_mem, clReleaseMemObject>;

// The default device of the first platform, a context and an in-order
// queue on it.
class Device
{
  public:
    Device()
    {
        cl_platform_id platform;
        cl_int err = clGetPlatformIDs(1, &platform, nullptr);
        check(err, "clGetPlatformIDs");
        err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_DEFAULT, 1, &device_,
                             nullptr);
        check(err, "clGetDeviceIDs");
        context_.reset(
            clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err));
        check(err, "clCreateContext");
        queue_.reset(clCreateCommandQueue(context_.get(), device_, 0, &err));
        check(err, "clCreateCommandQueue");
    }

    cl_context context() const
    {
        return context_.get();
    }
    cl_device_id device() const
    {
        return device_;
    }
    cl_command_queue queue() const
    {
        return queue_.get();
    }

    Buffer upload(const Matrix &host) const
    {
        cl_int err;
        Buffer b(clCreateBuffer(context_.get(),
                                CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                host.size() * sizeof(float),
                                const_cast<float *>(host.data()), &err));
        check(err, "clCreateBuffer");
        return b;
    }

    Buffer output(size_t elements) const
    {
        cl_int err;
        Buffer b(clCreateBuffer(context_.get(), CL_MEM_READ_WRITE,
                                elements * sizeof(float), nullptr, &err));
        check(err, "clCreateBuffer");
        return b;
    }

    Matrix download(const Buffer &b, size_t elements) const
    {
        Matrix host(elements);
        check(clEnqueueReadBuffer(queue_.get(), b.get(), CL_TRUE, 0,
                                  elements * sizeof(float), host.data(), 0,
                                  nullptr, nullptr),
              "clEnqueueReadBuffer");
        return host;
    }

  private:
    cl_device_id device_ = nullptr;
    Handle<cl_context, clReleaseContext> context_;
    Handle<cl_command_queue, clReleaseCommandQueue> queue_;
};

// A generated kernel's handle, destroyed with its NAME_destroy; NAME_create
// failing throws with the build log of every variant it tried.
template <typename K> using Kernel = std::unique_ptr<K, void (*)(K *)>;

template <typename K>
Kernel<K> create(const Device &dev, const char *name,
                 cl_int (*create_fn)(cl_context, cl_device_id, K **),
                 const char *(*build_log)(const K *), void (*destroy)(K *))
{
    K *raw = nullptr;
    cl_int err = create_fn(dev.context(), dev.device(), &raw);
    Kernel<K> kernel(raw, destroy);
    if (err != CL_SUCCESS) {
        std::string log = raw != nullptr ? build_log(raw) : "";
        throw std::runtime_error(std::string(name) + "_create failed (" +
                                 std::to_string(err) + "):\n" + log);
    }
    return kernel;
}

Matrix random_matrix(std::mt19937 &rng, size_t elements)
{
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    Matrix m(elements);
    std::generate(m.begin(), m.end(), [&] { return uniform(rng); });
    return m;
}

// The largest difference between GOT and WANT relative to WANT's largest
// magnitude; prints it and returns whether it is within the tolerance.
bool matches(const char *name, const Matrix &got, const Reference &want)
{
    double largest = 0, worst = 0;
    for (size_t i = 0; i < want.size(); i++) {
        largest = std::max(largest, std::fabs(want[i]));
        double diff = std::fabs(got[i] - want[i]);
        worst = std::isnan(diff) ? INFINITY : std::max(worst, diff);
    }
    double relative = worst / std::max(largest, 1e-30);
    bool ok = relative <= kTolerance;
    std::printf("%-13s %s (relative error %.2g)\n", name,
                ok ? "matches the CPU" : "MISMATCH", relative);
    return ok;
}

// y = x w + scale (x a) b, row by row.
bool run_lora(const Device &dev, std::mt19937 &rng)
{
    constexpr size_t K = demo_lora_IN_FEATURES, N = demo_lora_OUT_FEATURES,
                     R = demo_lora_RANK;
    Matrix x = random_matrix(rng, kRows * K), w = random_matrix(rng, K * N),
           a = random_matrix(rng, K * R), b = random_matrix(rng, R * N);
    auto kernel = create(dev, "demo_lora", demo_lora_create,
                         demo_lora_build_log, demo_lora_destroy);
    Buffer bx = dev.upload(x), bw = dev.upload(w), ba = dev.upload(a),
           bb = dev.upload(b), by = dev.output(kRows * N);
    check(demo_lora_enqueue(kernel.get(), dev.queue(), kRows, bx.get(),
                            bw.get(), ba.get(), bb.get(), by.get(), 0, nullptr,
                            nullptr),
          "demo_lora_enqueue");
    Matrix y = dev.download(by, kRows * N);

    Reference want(kRows * N);
    for (size_t r = 0; r < kRows; r++) {
        double xa[R] = {};
        for (size_t j = 0; j < R; j++) {
            for (size_t k = 0; k < K; k++) {
                xa[j] += double(x[r * K + k]) * a[k * R + j];
            }
        }
        for (size_t n = 0; n < N; n++) {
            double sum = 0, low_rank = 0;
            for (size_t k = 0; k < K; k++) {
                sum += double(x[r * K + k]) * w[k * N + n];
            }
            for (size_t j = 0; j < R; j++) {
                low_rank += xa[j] * b[j * N + n];
            }
            want[r * N + n] = sum + double(demo_lora_SCALE) * low_rank;
        }
    }
    return matches("demo_lora", y, want);
}

// y = exp(scale x - max) / sum(exp(scale x - max)), row by row.
bool run_softmax(const Device &dev, std::mt19937 &rng)
{
    constexpr size_t D = demo_softmax_FEATURES;
    Matrix x = random_matrix(rng, kRows * D);
    auto kernel = create(dev, "demo_softmax", demo_softmax_create,
                         demo_softmax_build_log, demo_softmax_destroy);
    Buffer bx = dev.upload(x), by = dev.output(kRows * D);
    check(demo_softmax_enqueue(kernel.get(), dev.queue(), kRows, bx.get(),
                               by.get(), 0, nullptr, nullptr),
          "demo_softmax_enqueue");
    Matrix y = dev.download(by, kRows * D);

    Reference want(kRows * D);
    for (size_t r = 0; r < kRows; r++) {
        const float *row = &x[r * D];
        double top =
            double(demo_softmax_SCALE) * *std::max_element(row, row + D);
        double sum = 0;
        for (size_t i = 0; i < D; i++) {
            want[r * D + i] =
                std::exp(double(demo_softmax_SCALE) * row[i] - top);
            sum += want[r * D + i];
        }
        for (size_t i = 0; i < D; i++) {
            want[r * D + i] /= sum;
        }
    }
    return matches("demo_softmax", y, want);
}

// y = x / sqrt(mean(x^2) + eps) * gamma, row by row.
bool run_rmsnorm(const Device &dev, std::mt19937 &rng)
{
    constexpr size_t D = demo_rmsnorm_FEATURES;
    Matrix x = random_matrix(rng, kRows * D), gamma = random_matrix(rng, D);
    auto kernel = create(dev, "demo_rmsnorm", demo_rmsnorm_create,
                         demo_rmsnorm_build_log, demo_rmsnorm_destroy);
    Buffer bx = dev.upload(x), bg = dev.upload(gamma),
           by = dev.output(kRows * D);
    check(demo_rmsnorm_enqueue(kernel.get(), dev.queue(), kRows, bx.get(),
                               bg.get(), by.get(), 0, nullptr, nullptr),
          "demo_rmsnorm_enqueue");
    Matrix y = dev.download(by, kRows * D);

    Reference want(kRows * D);
    for (size_t r = 0; r < kRows; r++) {
        double squares = 0;
        for (size_t i = 0; i < D; i++) {
            squares += double(x[r * D + i]) * x[r * D + i];
        }
        double inverse =
            1.0 / std::sqrt(squares / D + double(demo_rmsnorm_EPS));
        for (size_t i = 0; i < D; i++) {
            want[r * D + i] = x[r * D + i] * inverse * gamma[i];
        }
    }
    return matches("demo_rmsnorm", y, want);
}

} // namespace

int main()
{
    try {
        Device dev;
        std::mt19937 rng(20261123);
        // Every kernel runs, even after a mismatch: the report names all.
        bool ok = run_lora(dev, rng);
        ok = run_softmax(dev, rng) && ok;
        ok = run_rmsnorm(dev, rng) && ok;
        std::printf("%s\n", ok ? "OK" : "FAILED");
        return ok ? 0 : 1;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "specl_demo: %s\n", e.what());
        return 1;
    }
}
