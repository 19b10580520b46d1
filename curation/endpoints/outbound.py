"""Where the server may send model requests: loopback and the operator's list; link-local and metadata never.

Pure (no Django). The policy is checked twice: on the URL before a request (its host resolved, every
address checked) and on the address each connection actually reached (so a name that resolves elsewhere
between the two checks, DNS rebinding, still cannot reach a refused range).
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
    """Allowed hosts: names (`models.example.org`, `*.example.org`), addresses and networks (`10.0.0.0/8`)."""

    names: tuple[str, ...] = ()
    networks: tuple[Network, ...] = ()
    resolve: Callable[[str, int], list[Address]] = _resolve

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
        return any(host == name or (name.startswith("*.") and host.endswith(name[1:])) for name in self.names)

    def address_refusal(self, address: Address, *, is_name_listed: bool) -> str:
        """Why a connection to `address` is refused, or "" when it is allowed."""
        if any(address in network for network in ALWAYS_REFUSED):
            return f"{address} is a link-local, metadata or reserved address, which endpoints may never use"
        if is_name_listed or any(address in network for network in (*LOOPBACK, *self.networks)):
            return ""
        return f"{address} is neither loopback nor in TATCURATE_ENDPOINT_HOSTS"

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
        literal = _address(host)
        is_listed = literal is None and self._name_is_listed(host)
        if literal is not None:
            addresses = [literal]
        else:
            try:
                addresses = self.resolve(host, port)
            except OSError as error:
                # A listed name that does not resolve now is no danger: the connection's peer is checked too.
                return "" if is_listed else f"the host {host} cannot be resolved ({error})"
            if not addresses:
                return f"the host {host} has no address"
        for address in addresses:
            refusal = self.address_refusal(address, is_name_listed=is_listed)
            if refusal:
                about = host if literal is not None else f"{host} (resolves to {address})"
                return f"requests to {about} are refused: {refusal.split(' ', 1)[1]}"
        return ""

    def check_url(self, url: str) -> None:
        """Raise OutboundRefused unless requests to `url` are allowed."""
        refusal = self.url_refusal(url)
        if refusal:
            raise OutboundRefused(f"{refusal}. An operator allows hosts with TATCURATE_ENDPOINT_HOSTS.")


class GuardedBackend(httpcore.SyncBackend):
    """httpcore's socket backend that checks the address each new connection reached against the policy."""

    def __init__(self, policy: OutboundPolicy) -> None:
        self.policy = policy

    def connect_tcp(self, host: str, port: int, *args: Any, **kwargs: Any) -> httpcore.NetworkStream:
        stream = super().connect_tcp(host, port, *args, **kwargs)
        peer = _address(str(stream.get_extra_info("socket").getpeername()[0]))
        is_listed = _address(host) is None and self.policy._name_is_listed(host)
        refusal = (
            "unknown peer address" if peer is None else self.policy.address_refusal(peer, is_name_listed=is_listed)
        )
        if refusal:
            stream.close()
            raise OutboundRefused(f"the connection to {host} reached a refused address: {refusal}")
        return stream
