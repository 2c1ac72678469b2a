-- Data source addresses used to be accepted with a user name and password in them
-- (https://user:pass@host), stored in clear and listed in full, and a failed pull's last_error
-- could quote the CRM's answer. Both are refused now; this cleans what is already stored.

-- The user information of a stored address goes (a pull then goes without it).
UPDATE data_sources
SET base_url = regexp_replace(base_url, '^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#]*@', '\1')
WHERE base_url ~ '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*@';

-- Messages written before the fixed set may hold text from an answer.
UPDATE data_sources
SET last_error = 'the last pull failed (its message was removed: it could quote the CRM''s answer)'
WHERE last_error IS NOT NULL;
