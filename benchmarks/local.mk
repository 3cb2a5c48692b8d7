# SPDX-License-Identifier: GPL-2.0-or-later
# benchmarks: the product's benchmarks. Run them as
# root from the build tree; each starts a private vsd (tests/lib.sh) and
# prints its table and writes a CSV. Results: benchmarks/RESULTS.md, an
# index of one file per topic in benchmarks/results/.
#   insulation, vhosts   the paper's Figures 12 and 11 (loadgen.c drives them)
#   hosting              Figure 12 on Debian's stack: one front end (Apache
#                        or nginx, --front), two name-based sites, PHP-FPM
#                        on Unix sockets
#   cpushare, scale      CPU-share fidelity; 1,000 VSs (vsd-bulk.c)
#   netshare             network-share fidelity: two VSs, iperf3, a veth
#                        between two namespaces
#   accept-cost          the accept gate's cost per accept (acceptbench.c);
#                        -Q adds a server with --pm-qos on, -N one under
#                        notify-floor.c (the mechanism's floor)
#   rebind-favordynmods  re-binding with and without cgroup2 favordynmods
#   rebind-saturated     hand-over and re-binding while CPU hogs keep every
#                        CPU busy: the supervisor's scheduling class
#                        (VM tier guest only: the remount is for good)
#   accept-attrs-cost    what classifying by FastCGI params adds per accept
#   fcgi-peek            its peek and parse alone (fcgi-peek.c)
#   unix-peer-cost       classifying a Unix peer, against a TCP accept
#   connrate             the socket gate's cost per connection (connrate.c)
#   syscall-tax          what the accept gate's tracepoint fallback costs every
#                        system call on the machine (syscall-tax.c)
#   rules-scale          rule files at scale; the gate's decision cost
#                        (rules-query.c, gate-decision.c)
#   rules-attrs          the decision by request content (sites, content
#                        rules) at 10, 1,000 and 10,000 sites (rules-attrs.c)
#   rules-provider       a provider's file: 100 to 10,000 VSs, 300 rules,
#                        5 services; its baseline,
#                        the kernel's floor, is cgroup-floor.c
#   db-mode              what the database mode (protocol mysql) costs per
#                        query and per connection that moves a thread
#   wordpress            two WordPress-like sites (PHP-FPM, MariaDB) in five
#                        modes, from nothing gated to one pool and one
#                        MariaDB per site
#   fork-latency         how long a new process runs in its parent's VS
#                        before a fork rule moves it
#   top-cost             vsd's CPU per `vsctl top` refresh at 100 and 1,000 VSs
#   rules-fuzz           the rule parser's libFuzzer harness for 10 million
#                        executions (no root; tests/rules-fuzz.sh runs 20 s)
#   fcgi-fuzz            the FastCGI param parser's and classifier's harness
#                        for 10 million (no root; tests/fcgi-fuzz.sh runs 20 s)
# Design experiments that are not product figures: benchmarks/experiments/.
noinst_PROGRAMS += benchmarks/loadgen benchmarks/vsd-bulk benchmarks/acceptbench \
	benchmarks/connrate benchmarks/rules-query benchmarks/gate-decision benchmarks/cgroup-floor \
	benchmarks/rules-attrs benchmarks/syscall-tax
benchmarks_syscall_tax_SOURCES = benchmarks/syscall-tax.c
benchmarks_syscall_tax_CFLAGS = $(AM_CFLAGS) $(LIBBPF_CFLAGS)
benchmarks_syscall_tax_LDADD = lib/libvsd.a $(LIBBPF_LIBS)
benchmarks_loadgen_SOURCES = benchmarks/loadgen.c
benchmarks_loadgen_LDADD = lib/libvsd.a
benchmarks_vsd_bulk_SOURCES = benchmarks/vsd-bulk.c
benchmarks_vsd_bulk_LDADD = lib/libvsd.a
benchmarks_acceptbench_SOURCES = benchmarks/acceptbench.c
benchmarks_acceptbench_LDADD = -lpthread
benchmarks_connrate_SOURCES = benchmarks/connrate.c
benchmarks_connrate_CFLAGS = $(AM_CFLAGS) $(LIBBPF_CFLAGS)
benchmarks_connrate_LDADD = $(GATESOCKET_LIBS) -lm
benchmarks_rules_query_SOURCES = benchmarks/rules-query.c benchmarks/bench-rules.h
benchmarks_rules_query_LDADD = rules/librules.a lib/libvsd.a
benchmarks_rules_attrs_SOURCES = benchmarks/rules-attrs.c benchmarks/bench-rules.h
benchmarks_rules_attrs_LDADD = rules/librules.a lib/libvsd.a
benchmarks_cgroup_floor_SOURCES = benchmarks/cgroup-floor.c
benchmarks_cgroup_floor_LDADD = lib/libvsd.a
benchmarks_gate_decision_SOURCES = benchmarks/gate-decision.c
benchmarks_gate_decision_LDADD = $(GATEACCEPT_LIBS)
# The cost of classifying a Unix peer (gates/accept/unixpeer.c) against a
# TCP accept in the same run; results: benchmarks/results/unix-peer-cost.md.
noinst_PROGRAMS += benchmarks/unix-peer-cost
benchmarks_unix_peer_cost_SOURCES = benchmarks/unix-peer-cost.c
benchmarks_unix_peer_cost_LDADD = $(GATEACCEPT_LIBS)
# The gate's peek and parse of a FastCGI request (gates/accept/fcgi.c);
# results: benchmarks/results/accept-attrs-cost.md.
noinst_PROGRAMS += benchmarks/fcgi-peek
benchmarks_fcgi_peek_SOURCES = benchmarks/fcgi-peek.c
benchmarks_fcgi_peek_LDADD = $(GATEACCEPT_LIBS)
# The cheapest user-notification supervisor (RECV, SEND CONTINUE): the floor
# of any gate that stops every accept, for accept-cost -N.
noinst_PROGRAMS += benchmarks/notify-floor
benchmarks_notify_floor_SOURCES = benchmarks/notify-floor.c

dist_noinst_SCRIPTS += benchmarks/insulation benchmarks/vhosts benchmarks/cpushare benchmarks/netshare \
	benchmarks/scale benchmarks/accept-cost benchmarks/rules-scale benchmarks/rules-provider \
	benchmarks/fork-latency benchmarks/rules-fuzz benchmarks/fcgi-fuzz benchmarks/hosting \
	benchmarks/accept-attrs-cost benchmarks/top-cost benchmarks/rebind-favordynmods \
	benchmarks/rebind-saturated benchmarks/db-mode benchmarks/wordpress
dist_noinst_DATA += benchmarks/lib-bench.sh benchmarks/lib-hosting.sh benchmarks/lib-remote.sh benchmarks/lib-vsd.sh benchmarks/site.conf.in benchmarks/RESULTS.md \
	benchmarks/hosting-front.conf.in benchmarks/hosting-fpm.conf.in benchmarks/hosting-ad.php.in \
	benchmarks/hosting-nginx.conf.in benchmarks/wordpress-page.php.in
# The results: one page per benchmark, its CSV and plot (benchmarks/RESULTS.md
# is their index). `make bench-report` regenerates the pages' tables from
# their CSVs (benchmarks/bench-report).
BENCH_PAGES = benchmarks/results/accept-attrs-cost.md benchmarks/results/accept-cost.md benchmarks/results/accept-gate-decision.md \
	benchmarks/results/conntab-quota.md benchmarks/results/correctness-accept-gate.md benchmarks/results/cpushare.md \
	benchmarks/results/experiment-gate-window.md benchmarks/results/fcgi-fuzz.md benchmarks/results/experiment-rebind-choice.md benchmarks/results/fork-latency.md \
	benchmarks/results/hosting.md benchmarks/results/hosting-nginx.md benchmarks/results/insulation-remote.md benchmarks/results/insulation.md \
	benchmarks/results/kernel-6.1-fallbacks.md benchmarks/results/netshare.md benchmarks/results/rebind-favordynmods.md benchmarks/results/rebind-saturated.md \
	benchmarks/results/rules-attrs.md benchmarks/results/rules-fuzz.md benchmarks/results/rules-provider.md \
	benchmarks/results/rules-scale.md benchmarks/results/scale.md benchmarks/results/socket-gate-cost.md \
	benchmarks/results/syscall-tax.md benchmarks/results/top-cost.md benchmarks/results/unix-peer-cost.md \
	benchmarks/results/vhosts.md benchmarks/results/db-mode.md benchmarks/results/wordpress.md
dist_noinst_DATA += $(BENCH_PAGES) \
	benchmarks/results/accept-attrs-cost.csv benchmarks/results/accept-cost.csv benchmarks/results/accept-cost-home.csv benchmarks/results/hosting.csv \
	benchmarks/results/hosting.png benchmarks/results/hosting-b60.csv benchmarks/results/hosting-nginx.csv benchmarks/results/hosting-nginx.png benchmarks/results/insulation-remote.csv benchmarks/results/insulation-remote.png \
	benchmarks/results/insulation.csv benchmarks/results/insulation-b60.csv benchmarks/results/insulation.png benchmarks/results/kernel-6.1-fallbacks.csv \
	benchmarks/results/netshare.csv benchmarks/results/rebind-favordynmods.csv benchmarks/results/rebind-saturated.csv benchmarks/results/rules-attrs.csv \
	benchmarks/results/rules-provider.csv benchmarks/results/socket-gate-cost.csv benchmarks/results/syscall-tax.csv \
	benchmarks/results/top-cost.csv benchmarks/results/vhosts.csv benchmarks/results/vhosts.png \
	benchmarks/results/db-mode.csv benchmarks/results/wordpress.csv benchmarks/results/wordpress.png \
	benchmarks/results/accept-gate-decision.csv benchmarks/results/unix-peer-cost.csv benchmarks/results/fork-latency.csv \
	benchmarks/results/scale.csv benchmarks/results/cpushare.csv \
	benchmarks/results/rules-scale.csv benchmarks/results/rules-scale-query.csv
dist_noinst_SCRIPTS += benchmarks/bench-report benchmarks/gate-fair-report
dist_noinst_DATA += benchmarks/results/gate-fair.md benchmarks/results/gate-fair.csv
# the VM tier's times (scripts/test-vm writes them)
dist_noinst_DATA += benchmarks/results/vm-tier.md benchmarks/results/vm-tier.csv
bench-report:
	cd $(srcdir) && benchmarks/bench-report $(BENCH_PAGES)
CLEANFILES += cpushare.csv scale.csv accept-cost.csv accept-attrs-cost.csv netshare.csv \
	rebind-favordynmods.csv rebind-saturated.csv gate-decision.csv unix-peer-cost.csv \
	fork-latency.csv rules-scale.csv rules-scale-query.csv
