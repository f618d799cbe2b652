#!/usr/bin/env bash
# Scaffolds an Nx project folder with the workspace conventions.
# Usage: tools/scripts/mkproj.sh <name> <dir> <app|lib|tool> <scope>
set -euo pipefail
name=$1 dir=$2 type=$3 scope=$4
mkdir -p "$dir/src"
kind=library; [ "$type" = app ] && kind=application
[ -f "$dir/package.json" ] || cat > "$dir/package.json" <<JSON
{
  "name": "@asterism/$name",
  "version": "0.1.0",
  "private": true,
  "type": "module",
  "exports": {
    ".": "./src/index.ts"
  }
}
JSON
[ -f "$dir/project.json" ] || cat > "$dir/project.json" <<JSON
{
  "name": "$name",
  "\$schema": "../../node_modules/nx/schemas/project-schema.json",
  "sourceRoot": "$dir/src",
  "projectType": "$kind",
  "tags": ["type:$type", "scope:$scope"],
  "targets": {
    "typecheck": {},
    "lint": {},
    "test": {},
    "test:unit": {}
  }
}
JSON
[ -f "$dir/tsconfig.json" ] || cat > "$dir/tsconfig.json" <<'JSON'
{
  "extends": "../../tsconfig.base.json",
  "include": ["src/**/*.ts"]
}
JSON
echo "scaffolded $name in $dir (run npm install to link @asterism/$name)"
