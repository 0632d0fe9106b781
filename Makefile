# natsio — build, test, fuzz, benchmark.
# `make test` is the project's test command (CI runs it through .ci/run).

GO        ?= go
FUZZTIME  ?= 2m
# Short fuzz run per target inside `make test`.
FUZZSHORT ?= 15s
PKGS      := ./...
# Every fuzz target of the module, as package:Target (a target reading a
# package's unexported parser lives in that package's tests).
FUZZ_TARGETS = $(shell grep -rHo --include='*_test.go' --exclude-dir=bench --exclude-dir=otel '^func Fuzz[A-Za-z0-9_]*' . 2>/dev/null | sed -E 's|^\./(.*)/[^/]*_test\.go:func |\1:|' | sort)
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: all test vet race allocs fuzz-short fuzz bench bench-pkg lint soak test-bench test-otel

all: test

test: vet race allocs fuzz-short test-bench test-otel

# The zero-allocation tests live in //go:build !race files (the race
# detector allocates): run them without -race.
allocs:
	$(GO) test -count=1 -run 'Alloc|SpanningCopiesOnce' $(PKGS)

# The bench module (nats.go comparison and the nats.go interop tests).
test-bench:
	cd bench && $(GO) vet ./... && $(GO) test -count=1 -timeout 10m ./...

# The OpenTelemetry module (otel/, its own go.mod).
test-otel:
	cd otel && $(GO) vet ./... && $(GO) test -race -count=1 ./...

vet:
	$(GO) vet $(PKGS)

# Tests run in a random order, so none can rely on what another left
# behind; a failing run prints its seed (-shuffle=<seed> repeats the order).
race:
	$(GO) test -race -shuffle=on -count=1 -timeout 15m $(PKGS)

# A time-bounded fuzz run can fail with a bare "context deadline exceeded"
# when -fuzztime ends while a worker is busy (a Go toolchain race,
# golang/go#51484): with no failing input written, that target runs once
# more. A real finding ("Failing input written") or any other failure fails.
fuzz-short:
	@log=$$(mktemp); trap 'rm -f $$log' EXIT; \
	for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t#*:}; \
		echo "fuzz $$name ($$pkg) for $(FUZZSHORT)"; \
		for try in 1 2; do \
			if $(GO) test ./$$pkg -run='^$$' -fuzz="^$$name$$" -fuzztime=$(FUZZSHORT) -fuzzminimizetime=2s > $$log 2>&1; then cat $$log; break; fi; \
			cat $$log; \
			if [ $$try = 2 ] || grep -q 'Failing input written' $$log || ! grep -q 'context deadline exceeded' $$log; then exit 1; fi; \
			echo "fuzz $$name: -fuzztime ended during a busy worker (golang/go#51484), nothing found: running it once more"; \
		done; \
	done

fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t#*:}; \
		echo "fuzz $$name ($$pkg) for $(FUZZTIME)"; \
		$(GO) test ./$$pkg -run='^$$' -fuzz="^$$name$$" -fuzztime=$(FUZZTIME) || exit 1; \
	done

# The side-by-side benchmark (bench/, docs/performance.md); the package
# benchmarks when bench/ is not there.
bench:
	@if [ -f bench/go.mod ]; then \
		cd bench && $(GO) run ./cmd/bench; \
	else \
		$(GO) test -run='^$$' -bench=. -benchmem $(PKGS); \
	fi

bench-pkg:
	$(GO) test -run='^$$' -bench=. -benchmem $(PKGS)

# The chaos soak (chaos/): every workload under the seeded fault schedule for
# SOAK_SECONDS, single server then 3-node cluster, judged by the oracle.
SOAK_SECONDS ?= 240

soak: export SOAK_SECONDS := $(SOAK_SECONDS)
soak:
	$(GO) test ./chaos -run TestChaos -count=1 -timeout 15m -v

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) run $(STATICCHECK) $(PKGS)

# The compatibility suite (compat/, its own module): natsio against the
# latest patch of each nats-server line, each a child process. The servers
# are built from the Go module proxy with `go install` into COMPAT_BIN,
# once per version (the Go build cache makes a rebuild cheap); the suite
# runs two servers at a time.
COMPAT_SERVERS ?= v2.10.29 v2.11.17 v2.12.15 v2.14.10 v2.15.3
COMPAT_BIN     ?= $(abspath $(dir $(shell $(GO) env GOCACHE)))/natsio-compat
COMPAT_BINS     = $(foreach v,$(COMPAT_SERVERS),$(COMPAT_BIN)/$(v)/nats-server)
COMPAT_ENV      = NATSIO_COMPAT_SERVERS="$(subst $(eval) ,$(comma),$(foreach v,$(COMPAT_SERVERS),$(v)=$(COMPAT_BIN)/$(v)/nats-server))"
comma := ,

.PHONY: compat compat-servers compat-update

compat:
	$(MAKE) -j2 compat-servers
	cd compat && $(GO) vet ./... && $(COMPAT_ENV) $(GO) test -count=1 -parallel 2 -timeout 15m ./...

# Rewrites docs/compatibility.md's table from the suite's results.
compat-update:
	$(MAKE) -j2 compat-servers
	cd compat && $(COMPAT_ENV) NATSIO_COMPAT_UPDATE=1 $(GO) test -count=1 -parallel 2 -timeout 15m ./...

compat-servers: $(COMPAT_BINS)

$(COMPAT_BIN)/%/nats-server:
	GOBIN=$(COMPAT_BIN)/$* GOFLAGS=-buildvcs=false $(GO) install github.com/nats-io/nats-server/v2@$*
