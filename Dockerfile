# syntax=docker/dockerfile:1
# every in a minimal image: the static binary, CA certificates (for --ping
# and --store over TLS) and nothing else: no shell, no libc, no zone
# database (every embeds one: time/tzdata).
#
#   docker build -t every .
#   docker run -d --name backup -v every-state:/var/lib/every every \
#     '0 3 * * *' --tz Europe/Berlin --timeout 2h --name backup -- /job/backup
#
# every is PID 1: it reaps every orphan, passes SIGTERM on to the job's
# process group, SIGKILLs what is left after --kill-after (10s), and exits
# 143. Give docker stop more than that: docker stop -t 30.

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Static, stripped, no paths, no build id: as release/build. The .git
# directory comes along (see .dockerignore) so that Go stamps the version
# that every --version prints; -buildvcs=auto builds without it otherwise.
RUN CGO_ENABLED=0 go build -buildvcs=auto -trimpath -tags urfave_cli_no_docs \
      -ldflags='-s -w -buildid=' -o /out/usr/bin/every . \
 && mkdir -p /out/var/lib/every /out/tmp /out/etc/ssl/certs \
 && chown 65532:65532 /out/var/lib/every && chmod 0700 /out/var/lib/every \
 && chmod 1777 /out/tmp \
 && cp /etc/ssl/certs/ca-certificates.crt /out/etc/ssl/certs/

FROM scratch
COPY --from=build /out/ /
# Jobs and every status find the state here (EVERY_STATE_DIR is read as
# --state-dir, and not passed on to the job); keep it on a volume so that a
# new container picks up the grid, the run count and the last success.
ENV EVERY_STATE_DIR=/var/lib/every
VOLUME ["/var/lib/every"]
# The distroless "nonroot" user. Run with --user 0 for a job that needs root.
USER 65532:65532
ENTRYPOINT ["/usr/bin/every"]
CMD ["--help"]
# Healthy while each job of the state directory has succeeded within 25h
# and its every is alive: right for a daily job. Derived images set their
# own: HEALTHCHECK CMD ["/usr/bin/every", "status", "--max-age", "3m", "NAME"].
# The start period covers a schedule's wait for its first run.
HEALTHCHECK --interval=1m --timeout=10s --start-period=25h \
  CMD ["/usr/bin/every", "status", "--max-age", "25h"]
