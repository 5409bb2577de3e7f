// The sign-in page: says so when the server sent the browser back after a wrong key.
"use strict";

document.getElementById("failed").hidden = !new URLSearchParams(location.search).has("failed");
