// The repository this page came from, for its links (index.html via app.js, calibrate.html): the URL the
// build wrote into the ftcost-repo meta tag, or on GitHub Pages (OWNER.github.io/REPO/) github.com/OWNER/REPO;
// "" when neither is known.
"use strict";

function ftcostRepoUrl() {
  const repo = (document.querySelector('meta[name="ftcost-repo"]') || {}).content || "";
  if (repo && repo.indexOf("@") !== 0) return repo;
  const m = location.hostname.match(/^([^.]+)\.github\.io$/);
  const first = location.pathname.split("/").filter(Boolean)[0];
  return m && first ? "https://github.com/" + m[1] + "/" + first : "";
}
