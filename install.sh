#!/bin/sh
# install.sh: install every where the system finds it, in one command.
#
#   sudo ./install.sh [--prefix DIR] [--destdir DIR] [--bin FILE]
#                     [--mandir DIR] [--unitdir DIR] [--no-unit] [--uninstall]
#
# From a clone it builds the binary (Go 1.26 or later, on PATH or in
# /usr/local/go/bin); from a release archive it takes the binary beside it.
# It installs, under --prefix (default /usr/local):
#
#   bin/every                                      the binary
#   share/man/man1/every.1                         every(1) (--mandir)
#   share/bash-completion/completions/every        bash completion
#   share/zsh/site-functions/_every                zsh completion
#   share/fish/vendor_completions.d/every.fish     fish completion
#   lib/systemd/system/every@.service              the systemd unit (--unitdir;
#                                                  Linux only; --no-unit: none)
#   share/doc/every/every.conf.example             a job for the unit
#
# The unit's ExecStart names the binary where it was installed.
# --destdir DIR (or DESTDIR=DIR) puts every file under DIR as a package
# build does, while the paths inside the files (the unit's ExecStart) stay
# those of --prefix. --bin FILE installs FILE instead of building.
# --uninstall removes what an install with the same options put there; the
# jobs' state (/var/lib/every) and /etc/every are left alone.
set -eu

usage() { sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
fail() {
  echo "install.sh: $*" >&2
  exit 2
}

prefix=/usr/local destdir=${DESTDIR-} bin="" mandir="" unitdir="" unit=auto uninstall=false
while [ $# -gt 0 ]; do
  case $1 in
  --prefix | --destdir | --bin | --mandir | --unitdir)
    [ $# -ge 2 ] || fail "$1 needs a value; see --help"
    opt=${1#--} value=$2
    shift
    ;;
  --prefix=* | --destdir=* | --bin=* | --mandir=* | --unitdir=*)
    opt=${1%%=*} opt=${opt#--} value=${1#*=}
    ;;
  --no-unit) opt="" unit=no ;;
  --uninstall) opt="" uninstall=true ;;
  -h | --help)
    usage
    exit 0
    ;;
  *) fail "unknown argument \"$1\"; try --prefix DIR, --destdir DIR, --bin FILE, --mandir DIR, --unitdir DIR, --no-unit, --uninstall or --help" ;;
  esac
  case $opt in
  prefix) prefix=$value ;;
  destdir) destdir=$value ;;
  bin) bin=$value ;;
  mandir) mandir=$value ;;
  unitdir) unitdir=$value ;;
  esac
  shift
done

for dir in "$prefix" ${mandir:+"$mandir"} ${unitdir:+"$unitdir"}; do
  case $dir in
  /*) ;;
  *) fail "bad directory \"$dir\": give an absolute path, such as /usr/local" ;;
  esac
done
prefix=${prefix%/} # "/" becomes "", so that paths below start with one slash
mandir=${mandir:-$prefix/share/man}
unitdir=${unitdir:-$prefix/lib/systemd/system}
if [ "$unit" = auto ]; then
  unit=no
  [ "$(uname -s)" = Linux ] && unit=yes
fi
# Paths given relative to where install.sh was started, before it moves
# to its own directory (the tree it installs from).
case $bin in "" | /*) ;; *) bin=$(pwd)/$bin ;; esac
case $destdir in "" | /*) ;; *) destdir=$(pwd)/$destdir ;; esac
root=${destdir%/}
cd "$(dirname "$0")"

# Where each file goes, by its source in the tree.
bindest=$prefix/bin/every
set -- \
  "docs/every.1:$mandir/man1/every.1" \
  "completions/every.bash:$prefix/share/bash-completion/completions/every" \
  "completions/_every:$prefix/share/zsh/site-functions/_every" \
  "completions/every.fish:$prefix/share/fish/vendor_completions.d/every.fish" \
  "dist/systemd/every.conf.example:$prefix/share/doc/every/every.conf.example"
[ "$unit" = yes ] && set -- "$@" "dist/systemd/every@.service:$unitdir/every@.service"

if $uninstall; then
  for f in "$bindest" "$@"; do
    f=$root${f#*:}
    if [ -e "$f" ] || [ -L "$f" ]; then
      rm -f "$f"
      echo "removed $f"
    fi
  done
  rmdir "$root$prefix/share/doc/every" 2>/dev/null || true
  exit 0
fi

for pair in "$@"; do
  [ -f "${pair%%:*}" ] || fail "no ${pair%%:*} here: run install.sh from a clone of every or an unpacked release archive"
done

# Before a build that would be for nothing: can the files be written?
dir=$root$prefix
while [ ! -e "$dir" ]; do dir=$(dirname "$dir"); done
if [ ! -w "$dir" ] || { [ -e "$root$prefix/bin" ] && [ ! -w "$root$prefix/bin" ]; }; then
  echo "install.sh: cannot write to $root$prefix: run it with sudo, or choose --prefix, such as --prefix ~/.local" >&2
  exit 73
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/every-install.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

if [ -z "$bin" ] && [ ! -f go.mod ] && [ -f every ]; then
  bin=every # an unpacked release archive
fi
if [ -z "$bin" ]; then
  # sudo's PATH often lacks Go; the official tarball puts it here.
  command -v go >/dev/null 2>&1 || PATH=$PATH:/usr/local/go/bin
  command -v go >/dev/null 2>&1 ||
    fail "go not found on PATH or in /usr/local/go/bin: install Go 1.26 or later, or give --bin FILE"
  echo "building every ($(go version | cut -d' ' -f3))"
  # Static, stripped, without urfave/cli's man-page generator: as a release.
  # A root build of a clone that another user owns would have git refuse
  # the repository (safe.directory), and Go its version stamp with it.
  GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0="$(pwd)" \
    CGO_ENABLED=0 go build -buildvcs=auto -trimpath -tags urfave_cli_no_docs -ldflags='-s -w' -o "$work/every" .
  bin=$work/every
fi
[ -f "$bin" ] || fail "no binary at \"$bin\""

# put MODE SRC DEST: install one file, and say so.
put() {
  install -d -m 0755 "$(dirname "$3")"
  install -m "$1" "$2" "$3"
  echo "installed $3"
}

put 0755 "$bin" "$root$bindest"
for pair in "$@"; do
  src=${pair%%:*} dest=$root${pair#*:}
  case $src in
  *.service)
    # The unit in the tree names the default install's binary.
    esc=$(printf '%s\n' "$bindest" | sed 's/[&|\\]/\\&/g')
    sed "s|/usr/local/bin/every|$esc|g" "$src" >"$work/unit"
    src=$work/unit
    ;;
  esac
  put 0644 "$src" "$dest"
done

[ -n "$root" ] && exit 0
# Installed on this system: say where a tool will not look.
if [ "$unit" = yes ]; then
  case $unitdir in
  /etc/systemd/system | /usr/lib/systemd/system | /usr/local/lib/systemd/system | /lib/systemd/system) ;;
  *) echo "note: systemd does not look for units in $unitdir; link the unit: systemctl link $unitdir/every@.service" ;;
  esac
fi
if command -v man >/dev/null 2>&1 && [ "$(PATH=$prefix/bin:$PATH man -w every 2>/dev/null)" != "$mandir/man1/every.1" ]; then
  echo "note: man does not find $mandir/man1/every.1 first; add $mandir to MANPATH"
fi
if command -v zsh >/dev/null 2>&1 && ! zsh -fc '(($fpath[(Ie)$1]))' zsh "$prefix/share/zsh/site-functions"; then
  echo "note: zsh does not look in $prefix/share/zsh/site-functions; add it to fpath before compinit"
fi
if command -v fish >/dev/null 2>&1 && ! fish -c 'contains -- $argv[1] $fish_complete_path' "$prefix/share/fish/vendor_completions.d"; then
  echo "note: fish does not look in $prefix/share/fish/vendor_completions.d; add $prefix/share to XDG_DATA_DIRS"
fi
if [ "$unit" = yes ]; then
  echo "next: systemctl daemon-reload, write a job to /etc/every/NAME.conf (see $prefix/share/doc/every/every.conf.example), then systemctl enable --now every@NAME"
fi
