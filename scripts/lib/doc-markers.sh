# Generated parts of a doc page: the lines between `<!-- NAME:begin -->` and `<!-- NAME:end -->`.
# Sourced by the scripts that write them (sim-speed.sh); each defines `die`.
#   doc_markers_check FILE NAME        dies unless FILE has exactly one begin and one end line
#   doc_markers_write FILE NAME FRAG   replaces what is between them with FRAG's lines; the page
#                                      is written whole, through a temporary file and a rename

doc_markers_check() { # $1 = file, $2 = marker name
    [[ -f "$1" ]] || die "--doc $1: no such file"
    [[ $(grep -c "^<!-- $2:begin -->\$" "$1") == 1 && $(grep -c "^<!-- $2:end -->\$" "$1") == 1 ]] \
        || die "--doc $1: needs exactly one '<!-- $2:begin -->' line and one '<!-- $2:end -->' line"
}

doc_markers_write() { # $1 = file, $2 = marker name, $3 = fragment file
    local tmp
    tmp=$(mktemp "$(dirname "$1")/.$2.XXXXXX")
    awk -v frag="$3" -v begin="<!-- $2:begin -->" -v end="<!-- $2:end -->" '
        $0 == begin { print; while ((getline l < frag) > 0) print l; skip = 1; next }
        $0 == end { skip = 0 }
        !skip { print }' "$1" >"$tmp" || { rm -f "$tmp"; die "writing $1 failed"; }
    mv "$tmp" "$1"
}
