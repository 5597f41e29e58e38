# Sluice — run `make` for the list of targets.
SWIFT ?= swift
SLUICE := .build/debug/sluice

.PHONY: help build test lint format run install uninstall bench bench-instructions tsan fuzz clean

help: ## Show this help
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{printf "  make %-19s %s\n", $$1, $$2}'

build: ## Build everything (debug)
	$(SWIFT) build

test: ## Run every test (unit, store, CLI)
	$(SWIFT) build --product sluice
	$(SWIFT) test

lint: ## Check formatting (swift format, .swift-format) and the house rules (scripts/house-rules.py)
	$(SWIFT) format lint --strict --recursive Package.swift Sources Tests Fuzz/Package.swift Fuzz/Sources
	python3 scripts/house-rules.py

format: ## Format every Swift file in place (swift format, .swift-format)
	$(SWIFT) format format --in-place --recursive Package.swift Sources Tests Fuzz/Package.swift Fuzz/Sources

run: build ## Run the example pipeline (CSV + SQL dump + XML) into out/shop.sqlite (plain SQLite)
	rm -f out/shop.sqlite out/shop.sqlite-wal out/shop.sqlite-shm
	$(SLUICE) run Pipelines/shop.yaml
	@echo
	@echo "Query it with any SQLite client, for example:"
	@echo "  sqlite3 -header out/shop.sqlite 'SELECT o.order_number, o.placed_at, c.name FROM orders o JOIN customers c USING (customer_id)'"

PREFIX ?= /usr/local
CONFIGURATION ?= release
INSTALL_BUILD ?= $(SWIFT) build -c $(CONFIGURATION) --product sluice
INSTALLED := bin/sluice share/man/man1/sluice.1 share/bash-completion/completions/sluice \
	share/zsh/site-functions/_sluice share/fish/vendor_completions.d/sluice.fish
install: ## Build (release) and install bin/sluice, its man page and bash/zsh/fish completions under PREFIX (/usr/local)
	@echo "building sluice ($(CONFIGURATION)); a first release build takes 3 to 4 minutes on 2 cores..."
	$(INSTALL_BUILD)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions $(DESTDIR)$(PREFIX)/share/zsh/site-functions \
		$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
	install -m 755 .build/$(CONFIGURATION)/sluice $(DESTDIR)$(PREFIX)/bin/sluice
	python3 scripts/man-page.py .build/$(CONFIGURATION)/sluice > $(DESTDIR)$(PREFIX)/share/man/man1/sluice.1
	.build/$(CONFIGURATION)/sluice completions bash > $(DESTDIR)$(PREFIX)/share/bash-completion/completions/sluice
	.build/$(CONFIGURATION)/sluice completions zsh > $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_sluice
	.build/$(CONFIGURATION)/sluice completions fish > $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/sluice.fish
	@echo "installed $(DESTDIR)$(PREFIX)/bin/sluice (man sluice; completions for bash, zsh, fish)"

uninstall: ## Remove what `make install` put under PREFIX (/usr/local)
	for file in $(INSTALLED); do rm -f "$(DESTDIR)$(PREFIX)/$$file"; done
	@echo "removed sluice from $(DESTDIR)$(PREFIX)"

BENCH ?= ../shared/bench
bench: ## Run the benchmarks beside the kit's C parser, C floor and sqlite3 (release build; kit at $(BENCH)); one BENCH line per case, with ratio= to its reference
	@echo "building sluice and sluice-bench (release); a first release build takes 3 to 4 minutes on 2 cores..."
	$(SWIFT) build -c release --product sluice-bench
	$(SWIFT) build -c release --product sluice
	python3 $(BENCH)/gen.py medium > /dev/null
	python3 Pipelines/bench/gen-jsonl.py "$${SLUICE_BENCH_DATA:-$$(python3 -c 'import tempfile; print(tempfile.gettempdir())')/sluice-bench/data/medium}"
	$(CC) -O2 -o .build/release/newline-split Pipelines/bench/newline-split.c
	$(CC) -O2 -o .build/release/csvload $(BENCH)/c/csvload.c -lsqlite3
	SLUICE_BENCH_KIT=$(BENCH) .build/release/sluice-bench

bench-instructions: ## Count the instructions of the hot cases with valgrind (repeatable on a busy machine); one INSTRUCTIONS line per case
	$(SWIFT) build -c release --product sluice-bench
	$(SWIFT) build -c release --product sluice
	bash scripts/bench-instructions.sh .build/release $(BENCH)

tsan: ## Run the tests under the thread sanitizer (the CLI tests run a thread-sanitized sluice, built first)
	$(SWIFT) build --product sluice --sanitize=thread --scratch-path .build-tsan
	$(SWIFT) test --sanitize=thread --scratch-path .build-tsan

FUZZ_SECONDS ?= 600
FUZZ_TARGETS ?= FuzzCSV FuzzXML FuzzJSON FuzzSQLDump FuzzSQLiteFile FuzzModelFile FuzzPipelineFile
fuzz: ## Fuzz the readers, model and pipeline files (libFuzzer, FUZZ_SECONDS each, default 600; CI: 60)
	cd Fuzz && $(SWIFT) build -c release --scratch-path ../.build-fuzz -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld
	for t in $(FUZZ_TARGETS); do \
		mkdir -p .build-fuzz/corpus/$$t && cp -n Fuzz/Corpus/$$t/* .build-fuzz/corpus/$$t/ && \
		LSAN_OPTIONS=suppressions=$(CURDIR)/Fuzz/lsan-suppressions.txt .build-fuzz/release/$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 .build-fuzz/corpus/$$t || exit 1; \
	done

clean: ## Remove build products
	rm -rf .build .build-tsan .build-fuzz out
