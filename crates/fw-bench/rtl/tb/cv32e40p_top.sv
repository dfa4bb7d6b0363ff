// CV32E40P (OpenHW Group, RV32IMC, no PULP extensions, no FPU) with its two OBI buses brought
// out for tb.cpp; boot address 0, interrupts and debug tied off.
module top (
    input  logic        clk_i,
    input  logic        rst_ni,
    output logic        instr_req_o,
    input  logic        instr_gnt_i,
    input  logic        instr_rvalid_i,
    output logic [31:0] instr_addr_o,
    input  logic [31:0] instr_rdata_i,
    output logic        data_req_o,
    input  logic        data_gnt_i,
    input  logic        data_rvalid_i,
    output logic        data_we_o,
    output logic [ 3:0] data_be_o,
    output logic [31:0] data_addr_o,
    output logic [31:0] data_wdata_o,
    input  logic [31:0] data_rdata_i
);
  cv32e40p_top #(
      .COREV_PULP(0),
      .COREV_CLUSTER(0),
      .FPU(0),
      .ZFINX(0),
      .NUM_MHPMCOUNTERS(1)
  ) core (
      .clk_i,
      .rst_ni,
      .pulp_clock_en_i(1'b1),
      .scan_cg_en_i(1'b0),
      .boot_addr_i(32'h0),
      .mtvec_addr_i(32'h0),
      .dm_halt_addr_i(32'h0),
      .hart_id_i(32'h0),
      .dm_exception_addr_i(32'h0),
      .instr_req_o,
      .instr_gnt_i,
      .instr_rvalid_i,
      .instr_addr_o,
      .instr_rdata_i,
      .data_req_o,
      .data_gnt_i,
      .data_rvalid_i,
      .data_we_o,
      .data_be_o,
      .data_addr_o,
      .data_wdata_o,
      .data_rdata_i,
      .irq_i(32'h0),
      .irq_ack_o(),
      .irq_id_o(),
      .debug_req_i(1'b0),
      .debug_havereset_o(),
      .debug_running_o(),
      .debug_halted_o(),
      .fetch_enable_i(1'b1),
      .core_sleep_o()
  );
endmodule
