// Speed anchor: N TCP bulk transfers in ns-3 (packet-level, no ATM cells) from one
// sender node to one receiver node over one point-to-point link, so that cellbench's
// cost per transfer and its growth with N can be compared side by side.
// Build: bash scripts/ns3/build-ns3-anchor.sh  (Debian's libns3-dev).
// Prints one line: flows=N bytes_per_flow=B wall_s=W sim_s=S events=E rx_bytes=R
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include <chrono>
#include <iostream>
using namespace ns3;

int main(int argc, char** argv) {
  uint64_t bytes = 1u << 20;  // per flow
  uint32_t flows = 1, sndbuf = 52428, rcvbuf = 52428, mss = 9148, mtu = 9188, queue_pkts = 100;
  std::string rate = "100Mbps", delay = "50us";
  CommandLine cmd;
  cmd.AddValue("flows", "number of parallel TCP transfers", flows);
  cmd.AddValue("bytes", "bytes per transfer", bytes);
  cmd.AddValue("sndbuf", "", sndbuf);
  cmd.AddValue("rcvbuf", "", rcvbuf);
  cmd.AddValue("mss", "", mss);
  cmd.AddValue("mtu", "", mtu);
  cmd.AddValue("rate", "", rate);
  cmd.AddValue("delay", "", delay);
  cmd.AddValue("queue", "packets of queue at the link", queue_pkts);
  cmd.Parse(argc, argv);
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(sndbuf));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(rcvbuf));
  Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));

  NodeContainer nodes;
  nodes.Create(2);
  PointToPointHelper p2p;
  p2p.SetDeviceAttribute("DataRate", StringValue(rate));
  p2p.SetChannelAttribute("Delay", StringValue(delay));
  p2p.SetDeviceAttribute("Mtu", UintegerValue(mtu));
  p2p.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue(std::to_string(queue_pkts) + "p"));
  NetDeviceContainer devs = p2p.Install(nodes);
  InternetStackHelper stack;
  stack.Install(nodes);
  Ipv4AddressHelper addr;
  addr.SetBase("10.1.1.0", "255.255.255.0");
  Ipv4InterfaceContainer ifs = addr.Assign(devs);
  ApplicationContainer sinks;
  for (uint32_t i = 0; i < flows; i++) {
    uint16_t port = 10000 + i;
    BulkSendHelper src("ns3::TcpSocketFactory", InetSocketAddress(ifs.GetAddress(1), port));
    src.SetAttribute("MaxBytes", UintegerValue(bytes));
    src.SetAttribute("SendSize", UintegerValue(8192));
    src.Install(nodes.Get(0)).Start(Seconds(0.0));
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    sinks.Add(sink.Install(nodes.Get(1)));
  }
  sinks.Start(Seconds(0.0));
  auto t0 = std::chrono::steady_clock::now();
  Simulator::Run();
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  uint64_t rx = 0;
  for (uint32_t i = 0; i < sinks.GetN(); i++) rx += DynamicCast<PacketSink>(sinks.Get(i))->GetTotalRx();
  std::cout << "flows=" << flows << " bytes_per_flow=" << bytes << " wall_s=" << wall
            << " sim_s=" << Simulator::Now().GetSeconds() << " events=" << Simulator::GetEventCount()
            << " rx_bytes=" << rx << "\n";
  Simulator::Destroy();
}
