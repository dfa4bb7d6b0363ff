// Verilator testbench for fw-bench's RTL runs: one C++ file for the four cores, selected with
// -DCORE_CV32E40P, -DCORE_IBEX, -DCORE_PICORV32 or -DCORE_VEXRISCV (scripts/rtl.sh builds each).
//
//   Vtb <ops file> [+iws=N] [+dws=N] [+maxcycles=N]
//
// The ops file is what `fw-bench rtl` recorded while running its cases on rvsim
// (crates/fw-bench/src/rtl.rs writes it, one operation a line, numbers in hex):
//   L <addr> <bytes>            image bytes, loaded before reset (backdoor)
//   W <addr> <bytes>            a host write: the harness copies the bytes with its own stores
//   R <addr> <len>              a host read: the harness copies len bytes to the mailbox
//   C <id> <fn> <a0> .. <a7>    a measured call (start.S, rtl_call_*)
//   E <n>                       the empty sequence, n times
// and this program prints one line per W/R/C/E result:
//   W | R <bytes> | C <id> <a0> <a1> <cycles> <instret> | E <cycles> <instret>
// followed by `cycles <total>`. Anything unexpected (a trap, an access outside the memory map,
// a run past +maxcycles) prints `error: …` and exits 2.
//
// Memory: one flat RAM model. Mapped: the image [0, 1 MiB), fw-bench's scratch arena
// [0x7000_0000, +1 MiB), its call stack [0x7ff0_0000, 0x8000_0000) and the mailbox
// [0xf000_0000, +64 KiB). Every access costs the configured wait states: +iws on instruction
// fetches, +dws on data accesses (0: the response in the same cycle as the request, which each
// core's bus protocol allows; see docs/performance.md, "Cycles on RTL").
#include <verilated.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "Vtop.h"

namespace {

[[noreturn]] void fail(const std::string &what) {
  std::printf("error: %s\n", what.c_str());
  std::fflush(stdout);
  std::exit(2);
}

constexpr uint32_t MB_BASE = 0xf0000000u;
constexpr uint32_t MB_CMD = 0x00, MB_ADDR = 0x04, MB_LEN = 0x08, MB_CONFIG = 0x0c;
constexpr uint32_t MB_STATUS = 0x40, MB_TRAP_CAUSE = 0x44, MB_TRAP_PC = 0x48;
constexpr uint32_t MB_BLOCK = 0x80, MB_DONE = 0x7fc, MB_DATA = 0x1000;
constexpr uint32_t MB_DATA_MAX = 0xf000;
enum { CMD_WRITE = 1, CMD_READ = 2, CMD_CALL = 3, CMD_EMPTY = 4, CMD_EXIT = 5 };
enum { CFG_MACHINE_COUNTERS = 1, CFG_MACHINE_CSRS = 2, CFG_MCOUNTINHIBIT = 4 };

struct Mem {
  std::unordered_map<uint32_t, std::vector<uint8_t>> pages;  // 64 KiB pages

  static bool mapped(uint32_t a) {
    return a < 0x00100000u || (a >= 0x70000000u && a < 0x70100000u) ||
           (a >= 0x7ff00000u && a < 0x80000000u) || (a >= MB_BASE && a < MB_BASE + 0x10000u);
  }
  uint8_t *byte(uint32_t a) {
    if (!mapped(a)) {
      char b[64];
      std::snprintf(b, sizeof b, "access at 0x%08x: unmapped", a);
      fail(b);
    }
    auto &p = pages[a >> 16];
    if (p.empty()) p.assign(0x10000, 0);
    return &p[a & 0xffff];
  }
  uint32_t read32(uint32_t a) {
    a &= ~3u;
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) v |= uint32_t(*byte(a + i)) << (8 * i);
    return v;
  }
  void write32(uint32_t a, uint32_t v, uint32_t be) {
    a &= ~3u;
    for (int i = 0; i < 4; i++)
      if (be >> i & 1) *byte(a + i) = uint8_t(v >> (8 * i));
  }
};

struct Op {
  char kind;
  uint32_t addr = 0, len = 0, id = 0;
  std::vector<uint8_t> bytes;
  uint32_t args[9] = {};  // fn, a0..a7
};

std::vector<uint8_t> hex_bytes(const std::string &s) {
  std::vector<uint8_t> v;
  for (size_t i = 0; i + 1 < s.size(); i += 2) v.push_back(uint8_t(std::stoul(s.substr(i, 2), nullptr, 16)));
  return v;
}

std::vector<Op> read_ops(const char *path) {
  std::ifstream f(path);
  if (!f) fail(std::string("cannot read ") + path);
  std::vector<Op> ops;
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty()) continue;
    std::istringstream in(line);
    Op op;
    in >> op.kind;
    std::string hex;
    switch (op.kind) {
      case 'L':
      case 'W':
        in >> std::hex >> op.addr >> hex;
        op.bytes = hex_bytes(hex);
        break;
      case 'R':
        in >> std::hex >> op.addr >> op.len;
        break;
      case 'C':
        in >> std::hex >> op.id;
        for (auto &a : op.args) in >> std::hex >> a;
        break;
      case 'E':
        in >> std::hex >> op.len;
        break;
      default:
        fail("bad op line: " + line);
    }
    if (in.fail()) fail("bad op line: " + line);
    ops.push_back(op);
  }
  return ops;
}

// The harness's side of the protocol: on each store to DONE, finish the current operation and
// post the next command.
struct Driver {
  Mem &mem;
  std::vector<Op> ops;
  size_t next = 0;      // next op to post
  size_t chunk = 0;     // bytes of the current W/R already done
  int empty_left = 0;   // E: runs still to do
  char posted = 0;      // the command in flight: 0 (none yet), 'W', 'R', 'C', 'E'
  bool finished = false;
  std::string pending;  // hex of a split R

  uint32_t mb(uint32_t off) { return mem.read32(MB_BASE + off); }
  void set(uint32_t off, uint32_t v) { mem.write32(MB_BASE + off, v, 0xf); }

  void on_done() {
    if (mb(MB_STATUS) == 0xbad) {
      char b[96];
      std::snprintf(b, sizeof b, "trap: mcause 0x%x at pc 0x%08x", mb(MB_TRAP_CAUSE), mb(MB_TRAP_PC));
      fail(b);
    }
    if (mb(MB_STATUS) != 0) fail("harness status " + std::to_string(mb(MB_STATUS)));
    // Results of the command in flight.
    if (posted) {
      Op &op = ops[next];
      switch (posted) {
        case 'W':
          chunk += mb(MB_LEN);
          if (chunk < op.bytes.size()) return post_chunk();
          std::printf("W\n");
          break;
        case 'R': {
          uint32_t n = mb(MB_LEN);
          char h[3];
          for (uint32_t i = 0; i < n; i++) {
            std::snprintf(h, sizeof h, "%02x", *mem.byte(MB_BASE + MB_DATA + i));
            pending += h;
          }
          chunk += n;
          if (chunk < op.len) return post_chunk();
          std::printf("R %s\n", pending.c_str());
          pending.clear();
          break;
        }
        case 'C':
          std::printf("C %x %x %x %x %x\n", op.id, mb(MB_BLOCK + 36), mb(MB_BLOCK + 40),
                      mb(MB_BLOCK + 44), mb(MB_BLOCK + 48));
          break;
        case 'E':
          std::printf("E %x %x\n", mb(MB_BLOCK + 44), mb(MB_BLOCK + 48));
          if (--empty_left > 0) return post_empty();
          break;
      }
      next++;
      posted = 0;
    }
    // Post the next operation.
    while (next < ops.size() && ops[next].kind == 'L') next++;
    if (next == ops.size()) {
      set(MB_CMD, CMD_EXIT);
      finished = true;
      return;
    }
    Op &op = ops[next];
    chunk = 0;
    posted = op.kind;
    switch (op.kind) {
      case 'W':
      case 'R':
        return post_chunk();
      case 'C':
        set(MB_CMD, CMD_CALL);
        for (int i = 0; i < 8; i++) set(MB_BLOCK + 4 * i, op.args[1 + i]);
        set(MB_BLOCK + 32, op.args[0]);
        return;
      case 'E':
        empty_left = int(op.len);
        return post_empty();
    }
  }
  void post_empty() { set(MB_CMD, CMD_EMPTY); }
  void post_chunk() {
    Op &op = ops[next];
    uint32_t total = op.kind == 'W' ? uint32_t(op.bytes.size()) : op.len;
    uint32_t n = std::min<uint32_t>(total - uint32_t(chunk), MB_DATA_MAX);
    set(MB_CMD, op.kind == 'W' ? CMD_WRITE : CMD_READ);
    set(MB_ADDR, op.addr + uint32_t(chunk));
    set(MB_LEN, n);
    if (op.kind == 'W')
      for (uint32_t i = 0; i < n; i++) *mem.byte(MB_BASE + MB_DATA + i) = op.bytes[chunk + i];
  }
};

// A wait-state counter per bus: an access is answered once it has waited `ws` cycles.
struct Wait {
  uint32_t ws = 0, waited = 0;
  bool ready(bool active) {
    if (!active) {
      waited = 0;
      return false;
    }
    if (waited >= ws) return true;
    return false;
  }
  void tick(bool active, bool accepted) {
    if (accepted || !active)
      waited = 0;
    else
      waited++;
  }
};

}  // namespace

int main(int argc, char **argv) {
  auto ctx = std::make_unique<VerilatedContext>();
  ctx->commandArgs(argc, argv);
  if (argc < 2) fail("usage: Vtb <ops file> [+iws=N] [+dws=N] [+maxcycles=N]");
  uint32_t iws = 0, dws = 0;
  uint64_t maxcycles = 4000000000ull;
  for (int i = 2; i < argc; i++) {
    if (!std::strncmp(argv[i], "+iws=", 5)) iws = uint32_t(std::atoi(argv[i] + 5));
    else if (!std::strncmp(argv[i], "+dws=", 5)) dws = uint32_t(std::atoi(argv[i] + 5));
    else if (!std::strncmp(argv[i], "+maxcycles=", 11)) maxcycles = std::strtoull(argv[i] + 11, nullptr, 10);
    else fail(std::string("unknown argument ") + argv[i]);
  }
  Mem mem;
  Driver drv{mem, read_ops(argv[1])};
  for (auto &op : drv.ops)
    if (op.kind == 'L')
      for (size_t i = 0; i < op.bytes.size(); i++) *mem.byte(op.addr + uint32_t(i)) = op.bytes[i];
  auto top = std::make_unique<Vtop>(ctx.get());
  Wait iwait{iws}, dwait{dws};

  // Which counters the harness reads and which CSRs it may write (docs/performance.md, "Cycles
  // on RTL", cites each core's documentation).
#if defined(CORE_PICORV32)
  drv.set(MB_CONFIG, 0);  // rdcycle, rdinstret only; no machine CSRs
#elif defined(CORE_VEXRISCV)
  drv.set(MB_CONFIG, CFG_MACHINE_COUNTERS | CFG_MACHINE_CSRS);  // no mcountinhibit
#else
  drv.set(MB_CONFIG, CFG_MACHINE_COUNTERS | CFG_MACHINE_CSRS | CFG_MCOUNTINHIBIT);
#endif

  // Reset: inactive, active for 8 cycles, inactive (Ibex needs a 1 -> 0 edge on rst_ni).
  uint64_t cycle = 0;
  auto set_reset = [&](bool active) {
#if defined(CORE_VEXRISCV)
    top->reset = active;
#else
    top->rst_ni = !active;
#endif
  };
  auto clk = [&](int v) {
#if defined(CORE_VEXRISCV)
    top->clk = v;
#else
    top->clk_i = v;
#endif
  };
  set_reset(false);
  clk(0);
  top->eval();
  for (int i = 0; i < 10; i++) {
    set_reset(i >= 1 && i < 9);
    clk(1);
    top->eval();
    clk(0);
    top->eval();
  }

#if defined(CORE_CV32E40P) || defined(CORE_IBEX)
  // OBI-style buses (CV32E40P User Manual, "Instruction Fetch" and "Load-Store-Unit"; Ibex
  // documentation, "Instruction Fetch" and "Load-Store Unit"): a request is granted while
  // instr_req/data_req is high and gnt is high at a rising edge; its response comes with rvalid
  // in a later cycle. Here gnt rises after the wait states and rvalid follows in the next cycle.
  bool i_rvalid = false, d_rvalid = false;
  uint32_t i_rdata = 0, d_rdata = 0;
#endif
  while (!drv.finished || true) {
    if (++cycle > maxcycles) fail("no end after +maxcycles cycles");
    // Low phase: the core's outputs settle; drive the responses.
#if defined(CORE_CV32E40P) || defined(CORE_IBEX)
    top->instr_rvalid_i = i_rvalid;
    top->instr_rdata_i = i_rdata;
    top->data_rvalid_i = d_rvalid;
    top->data_rdata_i = d_rdata;
    top->eval();
    bool igrant = iwait.ready(top->instr_req_o);
    bool dgrant = dwait.ready(top->data_req_o);
    top->instr_gnt_i = igrant;
    top->data_gnt_i = dgrant;
    top->eval();
    bool ireq = top->instr_req_o, dreq = top->data_req_o;
    uint32_t iaddr = top->instr_addr_o, daddr = top->data_addr_o;
    bool dwe = top->data_we_o;
    uint32_t dbe = top->data_be_o, dwdata = top->data_wdata_o;
    clk(1);
    top->eval();
    iwait.tick(ireq, ireq && igrant);
    dwait.tick(dreq, dreq && dgrant);
    i_rvalid = ireq && igrant;
    if (i_rvalid) i_rdata = mem.read32(iaddr);
    d_rvalid = dreq && dgrant;
    if (d_rvalid) {
      if (dwe) {
        mem.write32(daddr, dwdata, dbe);
        if ((daddr & ~3u) == MB_BASE + MB_DONE) {
          if (drv.finished) break;
          drv.on_done();
        }
      } else {
        d_rdata = mem.read32(daddr);
      }
    }
#elif defined(CORE_PICORV32)
    // PicoRV32 native memory interface (README "PicoRV32 Native Memory Interface"): a transfer
    // completes in the cycle where mem_valid and mem_ready are both high; mem_instr marks a fetch.
    top->eval();
    bool valid = top->mem_valid;
    bool instr = top->mem_instr;
    Wait &w = instr ? iwait : dwait;
    bool ready = w.ready(valid);
    uint32_t addr = top->mem_addr;
    if (ready) {
      if (top->mem_wstrb) {
        mem.write32(addr, top->mem_wdata, top->mem_wstrb);
      } else {
        top->mem_rdata = mem.read32(addr);
      }
    }
    top->mem_ready = ready;
    top->eval();
    bool wrote = ready && top->mem_wstrb;
    clk(1);
    top->eval();
    w.tick(valid, ready);
    if (top->trap) fail("PicoRV32 trapped (illegal instruction or misaligned access)");
    if (wrote && (addr & ~3u) == MB_BASE + MB_DONE) {
      if (drv.finished) break;
      drv.on_done();
    }
#elif defined(CORE_VEXRISCV)
    // Wishbone B4 (VexRiscv's LiteX wrapper, iBusWishbone/dBusWishbone): a beat completes in a
    // cycle where CYC, STB and ACK are high; the instruction cache refills a line as an
    // incrementing burst (CTI = 010), one beat per ACK.
    top->eval();
    bool istb = top->iBusWishbone_CYC && top->iBusWishbone_STB;
    bool dstb = top->dBusWishbone_CYC && top->dBusWishbone_STB;
    bool iack = iwait.ready(istb), dack = dwait.ready(dstb);
    uint32_t iaddr = uint32_t(top->iBusWishbone_ADR) << 2, daddr = uint32_t(top->dBusWishbone_ADR) << 2;
    if (iack) top->iBusWishbone_DAT_MISO = mem.read32(iaddr);
    bool dwe = top->dBusWishbone_WE;
    if (dack && !dwe) top->dBusWishbone_DAT_MISO = mem.read32(daddr);
    top->iBusWishbone_ACK = iack;
    top->dBusWishbone_ACK = dack;
    top->eval();
    uint32_t dwdata = top->dBusWishbone_DAT_MOSI, dsel = top->dBusWishbone_SEL;
    clk(1);
    top->eval();
    iwait.tick(istb, iack);
    dwait.tick(dstb, dack);
    if (dack && dwe) {
      mem.write32(daddr, dwdata, dsel);
      if ((daddr & ~3u) == MB_BASE + MB_DONE) {
        if (drv.finished) break;
        drv.on_done();
      }
    }
#endif
    clk(0);
    top->eval();
  }
  std::printf("cycles %" PRIu64 "\n", cycle);
  top->final();
  return 0;
}
