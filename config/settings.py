"""TaT-Curate settings: every value comes from the environment, with embedded defaults for a fresh machine."""

from __future__ import annotations

from pathlib import Path

import dj_database_url
from kombu import Exchange, Queue

from curation.env import ConfigurationError, env_bool, env_int, env_list, env_str, secret_key_file

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(env_str("TATCURATE_DATA_DIR", str(BASE_DIR / "var"))).resolve()
DATA_DIR.mkdir(parents=True, exist_ok=True)

DEBUG = env_bool("DJANGO_DEBUG", True)
_INSECURE_KEY = "django-insecure-tatcurate-development-key-do-not-use-in-production"
# DJANGO_SECRET_KEY_FILE (scripts/start): a key generated once and kept in that file, mode 600.
_SECRET_KEY_FILE = env_str("DJANGO_SECRET_KEY_FILE")
SECRET_KEY = env_str("DJANGO_SECRET_KEY") or (
    secret_key_file(Path(_SECRET_KEY_FILE)) if _SECRET_KEY_FILE else (_INSECURE_KEY if DEBUG else "")
)
if not SECRET_KEY:
    raise ConfigurationError(
        "DJANGO_SECRET_KEY must be set when DJANGO_DEBUG=false (or DJANGO_SECRET_KEY_FILE, a file to keep one in)"
    )
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_filters",
    "curation",
    "annotate",
    "scoring",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "curation.page_errors.DomainErrorMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "curation.context_processors.navigation",
                "annotate.context_processors.guidelines_banner",
                "annotate.review.context.review_badges",
            ],
        },
    },
]

# --- Database: PostgreSQL from DATABASE_URL, else an embedded SQLite file in WAL mode.
DATABASE_URL = env_str("DATABASE_URL")
if DATABASE_URL and not DATABASE_URL.startswith("sqlite:"):
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60))}
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    # Prepared statements stay off on the connection (Django's default, `prepare_threshold` None): with any threshold
    # psycopg remembers the text of the last 100 statements of every cursor, a client-bound statement's values
    # inlined, so a connection that wrote a release kept tens of MB of INSERT text alive. Only the claim's cursor
    # (curation.services.lifecycle) prepares, turning them on around its own statement; its one generic plan serves
    # from the first claim on a connection.
    _url_options = DATABASES["default"].setdefault("OPTIONS", {})  # what the URL's query gives (sslmode, …) stays
    _url_options["options"] = f"{_url_options.get('options', '')} -c plan_cache_mode=force_generic_plan".strip()
else:
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL or f"sqlite:///{DATA_DIR / 'tatcurate.sqlite3'}")}
    DATABASES["default"]["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "timeout": 30,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    if not DATABASE_URL:
        # A file, not :memory:, so a real worker process can see what a test wrote.
        DATABASES["default"]["TEST"] = {"NAME": str(DATA_DIR / "test-tatcurate.sqlite3")}
IS_POSTGRES = DATABASES["default"]["ENGINE"].endswith("postgresql")
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Redis: cache and broker when REDIS_URL is set; else locmem cache and a filesystem broker.
REDIS_URL = env_str("REDIS_URL")
if REDIS_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

BROKER_DIR = DATA_DIR / "broker"
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", REDIS_URL or "filesystem://")
CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {}
if CELERY_BROKER_URL.startswith("filesystem://"):
    for sub in ("queue", "processed", "control"):
        (BROKER_DIR / sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "processed_folder": str(BROKER_DIR / "processed"),
        "control_folder": str(BROKER_DIR / "control"),
        "store_processed": False,
    }
else:
    # Longer than any task's hard time limit, so a running task is never redelivered while alive.
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3 * 3600}
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 1800, minimum=10)
CELERY_TASK_SOFT_TIME_LIMIT = (
    CELERY_TASK_TIME_LIMIT - 60 if CELERY_TASK_TIME_LIMIT > 120 else CELERY_TASK_TIME_LIMIT - 5
)
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# Every job row's worker renews its heartbeat this often (seconds); a row that missed TATCURATE_JOB_STALL_BEATS
# beats in a row is stalled and the beat reaper takes it over (curation/jobs.py: job_stall_seconds).
TATCURATE_JOB_HEARTBEAT_S = env_int("TATCURATE_JOB_HEARTBEAT_S", 2, minimum=1)
TATCURATE_JOB_STALL_BEATS = env_int("TATCURATE_JOB_STALL_BEATS", 4, minimum=2)
CELERY_BEAT_SCHEDULE = {
    "reap-expired-leases": {"task": "annotate.leases_reap", "schedule": 60.0},
    # One reaper for every kind of background job (each registered JobKind: curation/jobs.py, `job_kinds()`).
    # As often as a job renews its heartbeat, so a silent worker's rows are taken over seconds after they go stale.
    "reap-stalled-jobs": {"task": "curation.jobs_reap", "schedule": float(TATCURATE_JOB_HEARTBEAT_S)},
}
CELERY_BEAT_SCHEDULE_FILENAME = str(DATA_DIR / "celerybeat-schedule")
# Separate queues so a long drafting run never starves scoring or exports (curation/queues.py routes them);
# a worker started without -Q consumes all of them.
TATCURATE_DRAFTING_QUEUE = env_str("TATCURATE_DRAFTING_QUEUE", "drafting")
TATCURATE_SCORING_QUEUE = env_str("TATCURATE_SCORING_QUEUE", "scoring")
TATCURATE_EXPORTS_QUEUE = env_str("TATCURATE_EXPORTS_QUEUE", "exports")
# Webhook deliveries and the beat reapers: short tasks on a worker of their own, never behind ingestion or a run.
TATCURATE_CONTROL_QUEUE = env_str("TATCURATE_CONTROL_QUEUE", "control")
TATCURATE_WEBHOOKS_QUEUE = env_str("TATCURATE_WEBHOOKS_QUEUE", TATCURATE_CONTROL_QUEUE)
# A release cut of at least this many validated instances runs on a worker (the exports queue), not in the request.
TATCURATE_RELEASE_CUT_ASYNC_MIN_ITEMS = env_int("TATCURATE_RELEASE_CUT_ASYNC_MIN_ITEMS", 2000, minimum=1)
# A dataset file of this many questions or more is imported by the exports worker (curation/datasets/jobs.py).
TATCURATE_DATASET_IMPORT_ASYNC_MIN_QUESTIONS = env_int("TATCURATE_DATASET_IMPORT_ASYNC_MIN_QUESTIONS", 500, minimum=1)
# Whole-project figures (the manager's dashboard) are reused until an instance of the project changes, and at most
# this many seconds (work-time pings and exam attempts move them without an instance write); 0 computes every time.
TATCURATE_FIGURES_CACHE_S = env_int("TATCURATE_FIGURES_CACHE_S", 60, minimum=0)
CELERY_TASK_DEFAULT_QUEUE = "celery"
CELERY_TASK_ROUTES = ("curation.queues.task_queue_route",)
CELERY_TASK_QUEUES = [
    Queue(name, Exchange(name), routing_key=name)
    for name in dict.fromkeys(
        [
            "celery",
            TATCURATE_DRAFTING_QUEUE,
            TATCURATE_SCORING_QUEUE,
            TATCURATE_EXPORTS_QUEUE,
            TATCURATE_CONTROL_QUEUE,
            TATCURATE_WEBHOOKS_QUEUE,
        ]
    )
]

# --- Auth and API
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first: its WWW-Authenticate header makes anonymous requests 401 rather than 403.
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "curation.api_schema.AutoSchema",
    "EXCEPTION_HANDLER": "curation.api_errors.exception_handler",
    "DEFAULT_PARSER_CLASSES": [
        "curation.api_parsers.StrictJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "curation.pagination.BoundedLimitOffsetPagination",
    "PAGE_SIZE": 50,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "TaT-Curate API",
    "DESCRIPTION": "Curate question answering over tables and text; validate in two rounds; score models.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "InstanceStatusEnum": "curation.states.Status",
        "RoleEnum": "curation.states.Role",
        "AnswerFormEnum": "curation.models.Instance.AnswerForm",
        "AnswerSourceEnum": "curation.models.Instance.AnswerSource",
        "DatasetFormatEnum": "curation.datasets.models.ImportRecord.Format",
    },
    # Swagger UI draws a list of 150+ rows (tags and open operations) only where the window is: tags start closed
    # so every tag is on the page (and found by the browser's search); the filter box narrows them by name.
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "docExpansion": "none", "filter": True},
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# --- Time zone and static files (LANGUAGE_CODE "en-us", USE_I18N and USE_TZ are Django's defaults)
TIME_ZONE = "UTC"
STATIC_URL = "static/"
STATIC_ROOT = DATA_DIR / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
WHITENOISE_USE_FINDERS = True  # serve straight from the app folders: no collectstatic step on a fresh machine
WHITENOISE_AUTOREFRESH = DEBUG
STATICFILES_DIRS = [BASE_DIR / "static"]
MEDIA_ROOT = DATA_DIR / "media"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

# --- Uploads and archives
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("TATCURATE_MAX_REQUEST_BYTES", 10 * 1024 * 1024, minimum=1024)
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
TATCURATE_MAX_UPLOAD_BYTES = env_int("TATCURATE_MAX_UPLOAD_BYTES", 50 * 1024 * 1024, minimum=1024)
TATCURATE_MAX_UNPACKED_BYTES = env_int("TATCURATE_MAX_UNPACKED_BYTES", 200 * 1024 * 1024, minimum=1024)
TATCURATE_MAX_ARCHIVE_MEMBERS = env_int("TATCURATE_MAX_ARCHIVE_MEMBERS", 2000, minimum=1)
TATCURATE_MAX_COMPRESSION_RATIO = env_int("TATCURATE_MAX_COMPRESSION_RATIO", 100, minimum=1)
# Uploaded sources are read by a worker in a child process with these bounds (curation/papers/bounded.py): CPU
# seconds, wall seconds (then it is killed) and address space in bytes. A source that hits one is refused with why.
TATCURATE_INGEST_CPU_S = env_int("TATCURATE_INGEST_CPU_S", 60, minimum=1)
TATCURATE_INGEST_WALL_S = env_int("TATCURATE_INGEST_WALL_S", 120, minimum=1)
TATCURATE_INGEST_MEMORY_BYTES = env_int("TATCURATE_INGEST_MEMORY_BYTES", 1024 * 1024 * 1024, minimum=128 * 1024 * 1024)

# --- Work settings
TATCURATE_LEASE_MINUTES = env_int("TATCURATE_LEASE_MINUTES", 30, minimum=1)
TATCURATE_SET_ASIDE_HOURS = env_int("TATCURATE_SET_ASIDE_HOURS", 24, minimum=0)
TATCURATE_LOCAL_MODEL_PORT = env_int("TATCURATE_LOCAL_MODEL_PORT", 8089, minimum=1)
# Scoring: a local bert-base-uncased folder (config.json, model.safetensors, tokenizer.json) enables the SciTaT
# paper's BERTScore (layer 12) as a run option; unset, runs use the bundled all-MiniLM-L6-v2 and the option says why.
TATCURATE_BERT_BASE_UNCASED_DIR = env_str("TATCURATE_BERT_BASE_UNCASED_DIR")
# Model-written programs (PoT, CaR) run only inside bubblewrap. Where it cannot start they are not run and
# their items fail with the reason, unless this is true: then they run with rlimits only and can read what
# the worker can read (its environment file, the data directory) and reach the network. Never in production.
TATCURATE_UNSAFE_RUN_PROGRAMS_UNISOLATED = env_bool("TATCURATE_UNSAFE_RUN_PROGRAMS_UNISOLATED", False)
# How long a broker, cache, semaphore or database outage is ridden out before work is handed back (transient.py).
TATCURATE_TRANSIENT_RETRY_S = env_int("TATCURATE_TRANSIENT_RETRY_S", 30, minimum=1)
# A job row (drafting item, scoring chunk, export build, release cut) is given up after this many claims.
TATCURATE_JOB_MAX_ATTEMPTS = env_int("TATCURATE_JOB_MAX_ATTEMPTS", 3, minimum=1)

# --- Outbound requests (curation/endpoints/outbound.py): model endpoints may be on loopback or on these hosts
# (names, *.suffix wildcards, addresses or networks such as 10.0.0.0/8); link-local and metadata addresses never.
TATCURATE_ENDPOINT_HOSTS = env_list("TATCURATE_ENDPOINT_HOSTS", [])

# --- Hugging Face Hub (push_release): a write token for the dataset repositories releases are pushed to.
HF_TOKEN = env_str("HF_TOKEN", "")

# --- Webhooks (curation/webhooks/): receivers only on these hosts (names, *.suffix, `*` for any name, addresses,
# networks); a listed name reaches only public addresses, loopback and private ones only when listed as addresses
# or networks (127.0.0.1, 10.0.0.0/8); link-local and metadata never. Empty: no receiver is allowed.
TATCURATE_WEBHOOK_HOSTS = env_list("TATCURATE_WEBHOOK_HOSTS", [])
# A delivery is tried at most MAX_ATTEMPTS times, waiting BACKOFF_S, then twice, four times as long… between
# attempts (capped at an hour).
TATCURATE_WEBHOOK_MAX_ATTEMPTS = env_int("TATCURATE_WEBHOOK_MAX_ATTEMPTS", 5, minimum=1)
TATCURATE_WEBHOOK_BACKOFF_S = env_int("TATCURATE_WEBHOOK_BACKOFF_S", 10, minimum=0)
TATCURATE_WEBHOOK_TIMEOUT_S = env_int("TATCURATE_WEBHOOK_TIMEOUT_S", 10, minimum=1)

# --- Web tier (config/gunicorn_conf.py, config/web_worker.py): slow or idle clients hold no thread.
TATCURATE_WEB_WORKERS = env_int("TATCURATE_WEB_WORKERS", 2, minimum=1)
# An idle kept-alive connection is closed after this many seconds.
TATCURATE_KEEPALIVE_S = env_int("TATCURATE_KEEPALIVE_S", 5, minimum=1)
# A connection whose request headers have not all arrived this long after it opened is closed.
TATCURATE_HEADER_TIMEOUT_S = env_int("TATCURATE_HEADER_TIMEOUT_S", 10, minimum=1)

# --- Content-Security-Policy (django-csp) on every response: scripts and style sheets only from this site,
# no inline script anywhere. Style *attributes* stay allowed: bar widths and legend colours are data.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "style-src-attr": ["'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

# --- Production hardening (inactive in DEBUG so the embedded defaults work over plain HTTP).
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
if not DEBUG:
    # DJANGO_SECURE_COOKIES=false only for plain-HTTP use on a LAN (scripts/start): browsers drop secure cookies there.
    SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", True)
    SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", True)
    SECURE_HSTS_SECONDS = env_int("DJANGO_HSTS_SECONDS", 31536000, minimum=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "filters": {"refusals_on_one_line": {"()": "curation.log_filters.RefusalsOnOneLine"}},
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "plain", "filters": ["refusals_on_one_line"]}
    },
    "root": {"handlers": ["console"], "level": env_str("TATCURATE_LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}
