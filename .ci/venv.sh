# Sourced by .ci/{engines,served,lmcache}/install.sh: the one way an engine's venv is made.
#   venv_begin NAME VENV HERE   exits 0 at once when VENV's stamp holds the hash of HERE's
#                               install.sh and requirements.txt and of this file (nothing changed
#                               since the last install); otherwise makes VENV anew and sets PIP
#   venv_end NAME VENV          says what the install cost and writes the stamp (last, so an
#                               install that failed half-way is redone next time)

venv_begin() {
  local name=$1 venv=$2 here=$3
  want=$(cat "$here/install.sh" "$here/requirements.txt" "${BASH_SOURCE[0]}" | sha256sum | cut -d' ' -f1)
  stamp="$venv/.$name-installed"
  if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    echo "$name: already installed in $venv"
    exit 0
  fi
  start=$(date +%s)
  rm -rf "$venv"
  python3 -m venv "$venv"
  PIP=("$venv/bin/pip" install --quiet --disable-pip-version-check)
}

venv_end() {
  echo "$1: installed in $2 ($(du -sh "$2" | cut -f1)) in $(( $(date +%s) - start ))s"
  echo "$want" > "$stamp"
}
