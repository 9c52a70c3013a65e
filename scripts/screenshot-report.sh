#!/usr/bin/env bash
# Renders an HTML report with headless Chromium into a PNG, so a person can look at it.
#   scripts/screenshot-report.sh [latlab-results/report.html] [report.png]
set -euo pipefail
page="${1:-latlab-results/report.html}"
shot="${2:-${page%.html}.png}"
[ -f "$page" ] || { echo "error: $page does not exist; run latlab first or name a report" >&2; exit 2; }
browser="$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)"
[ -n "$browser" ] || { echo "error: no Chromium found; apt-get install chromium" >&2; exit 2; }
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --window-size=1280,6000 --screenshot="$(realpath -m "$shot")" "file://$(realpath "$page")" 2>/dev/null
echo "screenshot: $shot"
