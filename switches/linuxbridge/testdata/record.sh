#!/usr/bin/env bash
# Records the switch transcripts the unit tests read: real iproute2 and nftables JSON from a
# throw-away network namespace set up by hand (not by the driver), one file per port state.
# Run as root from this directory: ./record.sh. The VLAN-aware transcripts (aware-*.txt) are
# written by hand, since a kernel without bridge VLAN filtering cannot produce them.
set -euo pipefail
ns="lbrec$$"
cleanup() { ip netns del "$ns" 2>/dev/null || true; }
trap cleanup EXIT
N() { ip netns exec "$ns" "$@"; }

reads() { # port
  local port=$1 to
  echo "\$ ip -j -d link show"; N ip -j -d link show
  echo "\$ tc -j qdisc show dev $port"; N tc -j qdisc show dev "$port"
  if N tc -j qdisc show dev "$port" | grep -q '"ingress"'; then
    echo "\$ tc -j filter show dev $port parent ffff:"; N tc -j filter show dev "$port" parent ffff:
    to=$(N tc -j filter show dev "$port" parent ffff: | python3 -c 'import json,sys
for f in json.load(sys.stdin):
  for a in f.get("options",{}).get("actions",[]): print(a["to_dev"])')
    if [ -n "$to" ]; then echo "\$ tc -j qdisc show dev $to"; N tc -j qdisc show dev "$to"; fi
  fi
  echo "\$ nft -j list ruleset bridge"; N nft -j list ruleset bridge
  echo "\$ ip -j -s link show dev $port"; N ip -j -s link show dev "$port"
}

fresh() {
  cleanup
  ip netns add "$ns"
  N ip link set lo up
  N ip link add swp1 type veth peer name host1
  N ip link add swp2 type veth peer name host2
  N ip link add uplink type veth peer name core
  N ip link set host1 up; N ip link set host2 up; N ip link set core up; N ip link set uplink up
}

bind() { # port mac
  printf '%s\n' 'add table bridge subprov' \
    'add set bridge subprov bound_ports { type ifname; }' \
    'add set bridge subprov bindings { type ifname . ether_addr; }' \
    'add chain bridge subprov prerouting { type filter hook prerouting priority -200; policy accept; }' \
    'add rule bridge subprov prerouting iifname @bound_ports iifname . ether saddr != @bindings drop' | N nft -f -
  N nft add element bridge subprov bindings "{ \"$1\" . $2 }"
  N nft add element bridge subprov bound_ports "{ \"$1\" }"
}

service() { # port vlan down up mac
  N ip link show "br$2" >/dev/null 2>&1 || { N ip link add "br$2" type bridge; N ip link set "br$2" up; }
  N tc qdisc replace dev "$1" root tbf rate "$3"mbit burst 16384 latency 50ms
  N ip link add "ifb$1" type ifb; N ip link set "ifb$1" up
  N tc qdisc replace dev "ifb$1" root tbf rate "$4"mbit burst 16384 latency 50ms
  N tc qdisc add dev "$1" handle ffff: ingress
  N tc filter add dev "$1" parent ffff: protocol all prio 1 u32 match u32 0 0 action mirred egress redirect dev "ifb$1"
  [ -z "$5" ] || bind "$1" "$5"
  N ip link set "$1" master "br$2"
  N ip link set "$1" up
}

fresh
N ip link set swp1 up
reads swp1 >pervlan-off.txt

fresh
service swp1 100 10 5 02:00:00:00:01:01
service swp2 100 20 10 ""
reads swp1 >pervlan-service.txt

N ip link set swp1 down
reads swp1 >pervlan-suspended.txt

fresh
N ip link add br999 type bridge; N ip link set br999 up
N ip link set swp1 master br999; N ip link set swp1 up
reads swp1 >pervlan-captive.txt

fresh
N ip link add mgmt type bridge
N ip link set swp1 master mgmt
reads swp1 >pervlan-foreign.txt

# A port left half-configured: out of every bridge, but still limited and bound.
fresh
service swp1 100 10 5 02:00:00:00:01:01
N ip link set swp1 nomaster
reads swp1 >pervlan-leftover.txt
