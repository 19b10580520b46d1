"""Where the server may send requests: the operator's list for each kind (model endpoints: loopback too; webhooks:
nothing implicit, and loopback or private addresses only when listed as addresses); link-local and metadata never.

Pure (no Django). The host is resolved and every address checked on the URL before a request, and again when each
connection opens: the connection goes to an address just checked (pinned), never to a second lookup of the name, so
a name rebound between the check and the connection (DNS rebinding) cannot reach a refused range.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpcore

from curation.endpoints.errors import EndpointConfigError

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# Refused whatever the operator lists: link-local (where cloud metadata services live), the metadata
# addresses outside it, "this network", multicast and broadcast.
ALWAYS_REFUSED: tuple[Network, ...] = tuple(
    ipaddress.ip_network(cidr)
    for cidr in (
        "169.254.0.0/16",
        "fe80::/10",
        "100.100.100.200/32",  # Alibaba Cloud metadata
        "fd00:ec2::254/128",  # AWS metadata over IPv6
        "0.0.0.0/8",
        "::/128",
        "224.0.0.0/4",
        "ff00::/8",
        "255.255.255.255/32",
    )
)
LOOPBACK: tuple[Network, ...] = (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128"))


class OutboundRefused(EndpointConfigError):
    """The endpoint's host is not one the server may send requests to."""


def _address(text: str) -> Address | None:
    try:
        address = ipaddress.ip_address(text.strip("[]").split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _resolve(host: str, port: int) -> list[Address]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [address for info in infos if (address := _address(str(info[4][0]))) is not None]


@dataclass(frozen=True)
class OutboundPolicy:
    """Allowed hosts: names (`models.example.org`, `*.example.org`, `*` for any name), addresses and networks
    (`10.0.0.0/8`). `implicit`: networks allowed unlisted; `names_reach_private`: whether a listed name may resolve
    to a loopback or private address (otherwise only a listed address or network reaches one)."""

    names: tuple[str, ...] = ()
    networks: tuple[Network, ...] = ()
    resolve: Callable[[str, int], list[Address]] = _resolve
    implicit: tuple[Network, ...] = LOOPBACK
    names_reach_private: bool = True
    setting: str = "TATCURATE_ENDPOINT_HOSTS"

    @classmethod
    def from_entries(cls, entries: Iterable[str], **kwargs: Any) -> OutboundPolicy:
        """Parse the operator's list (TATCURATE_ENDPOINT_HOSTS); a malformed network raises ValueError."""
        names: list[str] = []
        networks: list[Network] = []
        for entry in (item.strip().lower() for item in entries):
            if not entry:
                continue
            if _address(entry) is not None or "/" in entry:
                networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
            else:
                names.append(entry.rstrip("."))
        return cls(names=tuple(names), networks=tuple(networks), **kwargs)

    def _name_is_listed(self, host: str) -> bool:
        host = host.lower().rstrip(".")
        return any(
            host == name or name == "*" or (name.startswith("*.") and host.endswith(name[1:])) for name in self.names
        )

    def address_refusal(self, address: Address, *, is_name_listed: bool) -> str:
        """Why a connection to `address` is refused, or "" when it is allowed."""
        if any(address in network for network in ALWAYS_REFUSED):
            return f"{address} is a link-local, metadata or reserved address, which is never allowed"
        if any(address in network for network in (*self.implicit, *self.networks)):
            return ""
        if is_name_listed and (self.names_reach_private or address.is_global):
            return ""
        if is_name_listed:
            return f"{address} is a loopback or private address, allowed only listed as an address in {self.setting}"
        return f"{address} is {'neither loopback nor ' if self.implicit else 'not '}in {self.setting}"

    def addresses(self, host: str, port: int) -> tuple[list[Address], str]:
        """The addresses of `host` (resolved once) and why connecting to them is refused ("" when every one is
        allowed). A listed name that cannot be resolved now is not refused (its connection fails instead)."""
        literal = _address(host)
        is_listed = literal is None and self._name_is_listed(host)
        if literal is not None:
            addresses = [literal]
        else:
            try:
                addresses = self.resolve(host, port)
            except OSError as error:
                return [], "" if is_listed else f"the host {host} cannot be resolved ({error})"
            if not addresses:
                return [], f"the host {host} has no address"
        for address in addresses:
            refusal = self.address_refusal(address, is_name_listed=is_listed)
            if refusal:
                about = host if literal is not None else f"{host} (resolves to {address})"
                return addresses, f"requests to {about} are refused: {refusal.split(' ', 1)[1]}"
        return addresses, ""

    def url_refusal(self, url: str) -> str:
        """Why requests to `url` are refused ("" when allowed): its host is resolved and every address checked."""
        parts = urlsplit(url)
        host = parts.hostname or ""
        if not host:
            return f"{url!r} has no host"
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            return f"{url!r} has an invalid port"
        return self.addresses(host, port)[1]

    def check_url(self, url: str) -> None:
        """Raise OutboundRefused unless requests to `url` are allowed."""
        refusal = self.url_refusal(url)
        if refusal:
            raise OutboundRefused(f"{refusal}. An operator allows hosts with {self.setting}.")


class GuardedBackend(httpcore.SyncBackend):
    """httpcore's socket backend that resolves each new connection's host once, checks every address against the
    policy and connects to a checked address (pinned: no second lookup a rebound name could answer). TLS still
    verifies the certificate against the host name."""

    def __init__(self, policy: OutboundPolicy) -> None:
        self.policy = policy

    def connect_tcp(self, host: str, port: int, *args: Any, **kwargs: Any) -> httpcore.NetworkStream:
        addresses, refusal = self.policy.addresses(host, port)
        if refusal:
            raise OutboundRefused(f"{refusal}. An operator allows hosts with {self.policy.setting}.")
        if not addresses:
            raise httpcore.ConnectError(f"the host {host} cannot be resolved")
        error: Exception | None = None
        for address in addresses:
            try:
                return super().connect_tcp(str(address), port, *args, **kwargs)
            except httpcore.ConnectError as failed:
                error = failed
        raise error
