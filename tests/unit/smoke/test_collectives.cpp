#include "ezpz/smoke/collectives.hpp"
#include "tests/catch.hpp"

using namespace ezpz::report;

namespace {

struct BusCase {
  Collective collective;
  int ranks;
  double factor;  // nccl-tests' doc/PERFORMANCE.md
};

}  // namespace

TEST_CASE("bus bandwidth corrects algorithm bandwidth as nccl-tests does", "[collectives]") {
  const BusCase cases[] = {
      {Collective::all_reduce, 1, 0},    {Collective::all_reduce, 2, 1.0},
      {Collective::all_reduce, 4, 1.5},  {Collective::all_reduce, 8, 1.75},
      {Collective::all_gather, 1, 0},    {Collective::all_gather, 2, 0.5},
      {Collective::all_gather, 4, 0.75}, {Collective::all_gather, 8, 0.875},
  };
  for (const BusCase& c : cases) {
    INFO(collective_name(c.collective) << " over " << c.ranks << " ranks");
    CHECK(bus_factor(c.collective, c.ranks) == c.factor);
  }
}

TEST_CASE("a row's bandwidths: S / t, then the bus factor", "[collectives]") {
  // 4 MiB all-reduced over 4 ranks in 2 ms: 2.097 GB/s algbw, x 1.5 bus.
  BandwidthRow r{
      .collective = Collective::all_reduce, .bytes = 4u << 20, .time_s = 2e-3, .ranks = 4};
  CHECK(r.algbw_gbs() == Approx(2.097152));
  CHECK(r.busbw_gbs() == Approx(3.145728));
  BandwidthRow gather{
      .collective = Collective::all_gather, .bytes = 1u << 20, .time_s = 1e-3, .ranks = 2};
  CHECK(gather.busbw_gbs() == Approx(0.524288));
  CHECK(BandwidthRow{}.algbw_gbs() == 0);  // never timed: no division by zero
}

TEST_CASE("all-gather splits the array between ranks; all-reduce gives each all of it",
          "[collectives]") {
  CHECK(elements_per_rank(Collective::all_reduce, 4096, 4) == 1024);
  CHECK(elements_per_rank(Collective::all_gather, 4096, 4) == 256);
  CHECK(array_bytes(Collective::all_gather, 256, 4) == 4096);
  CHECK(array_bytes(Collective::all_reduce, 1024, 4) == 4096);
  // 3 ranks do not divide 1 KiB: S is what was really gathered.
  CHECK(elements_per_rank(Collective::all_gather, 1024, 3) == 85);
  CHECK(array_bytes(Collective::all_gather, 85, 3) == 1020);
  CHECK(elements_per_rank(Collective::all_gather, 4, 8) == 1);
}

TEST_CASE("the sweep: powers of 4 from 1 KiB, fewer repetitions for large messages",
          "[collectives]") {
  CHECK(sweep_sizes(4u << 20) ==
        std::vector<std::size_t>{1024, 4096, 16384, 65536, 262144, 1u << 20, 4u << 20});
  CHECK(sweep_sizes(5000) == std::vector<std::size_t>{1024, 4096});
  CHECK(sweep_sizes(0) == std::vector<std::size_t>{1024});
  CHECK(sweep_iterations(1024) == 40);
  CHECK(sweep_iterations(4u << 20) == 16);
  CHECK(sweep_iterations(64u << 20) == 5);
}

TEST_CASE("sizes read as KiB and MiB", "[collectives]") {
  CHECK(size_label(1024) == "1 KiB");
  CHECK(size_label(262144) == "256 KiB");
  CHECK(size_label(4u << 20) == "4 MiB");
  CHECK(size_label(1020) == "1020 B");
}

TEST_CASE("the table, the plot and the headline figures", "[collectives]") {
  std::vector<BandwidthRow> rows = {
      {Collective::all_reduce, 1024, 100e-6, 2},
      {Collective::all_reduce, 1u << 20, 1e-3, 2},
      {Collective::all_gather, 1024, 50e-6, 2},
  };
  CHECK(bandwidth_table(rows) ==
        "| collective | size | time (us) | algbw (GB/s) | busbw (GB/s) |\n"
        "|---|---:|---:|---:|---:|\n"
        "| all_reduce | 1 KiB | 100.0 | 0.010 | 0.010 |\n"
        "| all_reduce | 1 MiB | 1000.0 | 1.049 | 1.049 |\n"
        "| all_gather | 1 KiB | 50.0 | 0.020 | 0.010 |\n");
  CHECK(bandwidth_plot(rows, 10) ==
        "bus bandwidth by message size (GB/s, full bar 1.049)\n"
        "all_reduce\n"
        "     1 KiB |          | 0.010\n"
        "     1 MiB |##########| 1.049\n"
        "all_gather\n"
        "     1 KiB |          | 0.010\n");
  CollectiveHeadline h = headline(rows, Collective::all_reduce);
  CHECK(h.latency_us == Approx(100));
  CHECK(h.peak_busbw_gbs == Approx(1.048576));
  CHECK(headline(rows, Collective::all_gather).latency_us == Approx(50));
}
