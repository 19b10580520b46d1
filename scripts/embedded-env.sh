# Sourced by scripts/start (and by its test): the environment of the embedded start, safe to share on a LAN.
# Every variable keeps a value already set, so `DJANGO_DEBUG=true bash scripts/start` debugs.
# Needs $data_dir (the data directory).
export DJANGO_DEBUG="${DJANGO_DEBUG:-false}"
export DJANGO_SECRET_KEY_FILE="${DJANGO_SECRET_KEY_FILE:-$(cd "$data_dir" && pwd)/secret_key}"
export DJANGO_SECURE_SSL_REDIRECT="${DJANGO_SECURE_SSL_REDIRECT:-false}"
export DJANGO_SECURE_COOKIES="${DJANGO_SECURE_COOKIES:-false}"
export DJANGO_HSTS_SECONDS="${DJANGO_HSTS_SECONDS:-0}"
if [ -z "${DJANGO_ALLOWED_HOSTS:-}" ]; then
  # This machine by name and by each of its addresses (what a colleague types in the address bar).
  hosts="localhost,127.0.0.1,[::1],$(hostname)"
  for address in $(hostname -I 2>/dev/null || true); do
    case "$address" in *:*) hosts="$hosts,[$address]" ;; *) hosts="$hosts,$address" ;; esac
  done
  export DJANGO_ALLOWED_HOSTS="$hosts"
fi
